// Refusals are paced: at most REFUSALS_PER_CORE_SECOND a second per core are answered, and a refusal
// beyond the pace waits its turn, its body unread, before its 429 / UNAVAILABLE goes out.
// A sender that ignores Retry-After sends again the moment it is refused, so a fleet of them makes
// refusals as fast as they are answered, and each costs the machine a connection or stream and the
// part of a body pushed before the answer. On bench:overload's 2 cores (400 senders of 2.6 MB
// exports, the fleet beside the server) answering every refusal at once made ~2,300 a second: the
// machine spent 60% of its time in the kernel, the server's decoding and commits waited for the CPU
// (a 4,000-span export took 0.5 s to decode instead of 30 ms), and 4% of the unloaded ingest rate was
// acknowledged, each after 2-7 s. Paced, the fleet waits on the server instead of spinning, and the
// CPU goes to what was admitted. The price is the refusal's own latency: N senders refused back to
// back wait N / pace for each answer (bench/README.md). Senders that honour Retry-After are refused
// a few times a second at most: within the burst, answered at once.

/** Answers a refusal now or once its turn comes. */
export interface RefusalPace {
  /** Calls `answer` now if the pace allows, else in arrival order as the pace frees turns. */
  hold(answer: () => void): void;
  /** Refusals waiting for their turn now, and those that waited since start (status). */
  waiting(): number;
  paced(): number;
}

/**
 * Refusals answered a second per core. Chosen on bench:overload (OTLP/HTTP, 2 cores): 250 a core
 * let 60-62% of the unloaded rate through a 400-sender flood, 167 86%, 125 73% (refusals then waited
 * 0.8, 1.2 and 1.5 s); each refusal of a 2.6 MB body costs the machine ~1.4 ms of CPU on loopback, sender included.
 */
export const REFUSALS_PER_CORE_SECOND = 160;

/** Refusals answered at once after a quiet spell: a tenth of a second's pace, at least one. */
export function refusalBurst(perSecond: number): number {
  return Math.max(1, perSecond * 0.1);
}

/**
 * The most refusals held at once; beyond it a refusal is answered at once. A held OTLP/HTTP
 * connection keeps at most its socket's receive buffer in the kernel, a gRPC stream at most its
 * window (GRPC_STREAM_WINDOW) in the process: this bounds what waiting costs.
 */
export const MAX_WAITING_REFUSALS = 1024;

/** Turns are handed out at most this often, a few at a time at high paces. */
const TICK_MS = 10;

export function createRefusalPace(opts: { perSecond: number; maxWaiting?: number; now?: () => number }): RefusalPace {
  const now = opts.now ?? (() => performance.now());
  const maxWaiting = opts.maxWaiting ?? MAX_WAITING_REFUSALS;
  const burst = refusalBurst(opts.perSecond);
  let tokens = burst;
  let last = now();
  const queue: (() => void)[] = []; // at most maxWaiting: shift() from it is cheap
  let timer: NodeJS.Timeout | null = null;
  let paced = 0;
  const refill = () => {
    const t = now();
    tokens = Math.min(burst, tokens + ((t - last) / 1000) * opts.perSecond);
    last = t;
  };
  const drain = () => {
    timer = null;
    refill();
    while (tokens >= 1 && queue.length > 0) {
      tokens--;
      const answer = queue.shift()!;
      // Answered from a timer: a sender gone meanwhile must not stop the others' turns, nor the process.
      try {
        answer();
      } catch {
        /* nothing left to tell it */
      }
    }
    if (queue.length > 0) schedule();
  };
  const schedule = () => {
    if (timer) return;
    const ms = Math.max(TICK_MS, ((1 - tokens) / opts.perSecond) * 1000);
    timer = setTimeout(drain, ms);
    timer.unref();
  };
  return {
    hold(answer) {
      refill();
      if (queue.length === 0 && tokens >= 1) {
        tokens--;
        return answer();
      }
      if (queue.length >= maxWaiting) return answer();
      queue.push(answer);
      paced++;
      schedule();
    },
    waiting: () => queue.length,
    paced: () => paced,
  };
}

/** The instance's pace: REFUSALS_PER_CORE_SECOND for each core it may use. */
export function refusalsPerSecond(cores: number): number {
  return REFUSALS_PER_CORE_SECOND * Math.max(1, cores);
}
