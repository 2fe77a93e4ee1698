/** The part of the WebSocket API the session uses; browsers' `WebSocket` and the `ws` package both fit. */
export interface SocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

export type SocketFactory = (url: string) => SocketLike;

/** WebSocket.CONNECTING */
export const SOCKET_CONNECTING = 0;
/** WebSocket.OPEN */
export const SOCKET_OPEN = 1;

/** Converts a received frame (ArrayBuffer in browsers with binaryType 'arraybuffer', Buffer in Node) to bytes. */
export function frameBytes(data: unknown): Uint8Array | null {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (Array.isArray(data) && data.every((d) => d instanceof Uint8Array)) {
    const total = data.reduce((n: number, d: Uint8Array) => n + d.length, 0);
    const out = new Uint8Array(total);
    let off = 0;
    for (const d of data as Uint8Array[]) {
      out.set(d, off);
      off += d.length;
    }
    return out;
  }
  return null;
}
