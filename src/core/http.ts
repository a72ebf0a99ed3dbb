// The HTTP shapes more than one layer names: a reply, and the slice of a uWebSockets.js response
// that the API shell writes and the tenancy forwarder relays to (tenancy sits below api/).

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body: string | Uint8Array;
}

/** What of a uWebSockets.js response the product uses (its ArrayBuffers are valid only inside onData). */
export interface UwsResponse {
  onAborted(cb: () => void): void;
  onData(cb: (chunk: ArrayBuffer, isLast: boolean) => void): void;
  cork(cb: () => void): void;
  writeStatus(s: string): UwsResponse;
  writeHeader(k: string, v: string): UwsResponse;
  /** `closeConnection` closes the connection once the answer is written (whatever of the request is unread is not read). */
  end(body?: string | Uint8Array, closeConnection?: boolean): void;
  /** Stops reading the request: what the sender pushes waits in its socket's buffers. */
  pause(): void;
}
