// What was started, stopped in reverse order: start-up pushes a stop for each part it brought up, and
// shutdown (or a start-up that failed halfway) runs them last first, logging a step that fails and
// going on with the rest.
export type Stop = () => Promise<void> | void;

export function stopStack(onError: (err: Error) => void): { push(stop: Stop): void; stopAll(): Promise<void> } {
  const stops: Stop[] = [];
  return {
    push: (stop) => void stops.push(stop),
    async stopAll() {
      while (stops.length) {
        try {
          await stops.pop()!();
        } catch (err) {
          onError(err as Error);
        }
      }
    },
  };
}
