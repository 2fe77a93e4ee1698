// A TCP relay between a page and the Wave server that a test can cut and restore, to take one user offline.
// Playwright's `context.setOffline(true)` does not close WebSockets that are already open (FIELD-NOTES), so the
// session would stay online; cutting the relay closes them the way a lost network does.
//
// What holds:
// - While cut, every connection the relay carried is destroyed (both sides, so the server drops the user too) and
//   every new one is destroyed as soon as it is accepted: nothing reaches the server until `restore()`.
// - The relay listens on one port for its whole life, so a page configured with its URL reconnects to it.
// - Bytes are passed through unchanged, in order, both ways (HTTP, the WebSocket upgrade and its frames alike).
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

export class Relay {
  private cutOff = false;
  private readonly pairs = new Set<[Socket, Socket]>();
  private readonly server: Server;
  /** `http://127.0.0.1:PORT` once started: use it as the page's `serverUrl`. */
  url = '';

  private constructor(target: string) {
    const { hostname, port } = new URL(target);
    this.server = createServer((client) => this.accept(client, hostname, Number(port)));
  }

  /** Starts a relay on a free port of 127.0.0.1 to `target` (an `http://host:port` URL). */
  static async start(target: string): Promise<Relay> {
    const relay = new Relay(target);
    await new Promise<void>((resolve, reject) => {
      relay.server.once('error', reject);
      relay.server.listen(0, '127.0.0.1', () => resolve());
    });
    relay.url = `http://127.0.0.1:${(relay.server.address() as AddressInfo).port}`;
    return relay;
  }

  /** Connections carried right now. */
  get open(): number {
    return this.pairs.size;
  }

  get isCut(): boolean {
    return this.cutOff;
  }

  /** Destroys every carried connection and refuses new ones until `restore()`. */
  cut(): void {
    this.cutOff = true;
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
  }

  restore(): void {
    this.cutOff = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, host: string, port: number): void {
    if (this.cutOff) {
      client.destroy();
      return;
    }
    const upstream = connect({ host, port });
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
    // Either side ending or failing ends both: a half-open pair would look like a live connection to one end.
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair) {
      socket.once('close', end);
      socket.once('error', end);
    }
  }
}
