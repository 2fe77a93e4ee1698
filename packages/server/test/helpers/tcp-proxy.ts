/**
 * A TCP relay the test controls, between a server and a service (Redis): `cut()` destroys every relayed connection
 * and refuses new ones (each is accepted and reset at once) until `restore()`, as a broken network link would.
 * The server on the other side keeps its own clients; only this link fails.
 */
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private cutOff = false;

  private constructor(private readonly server: Server) {}

  /** Listens on a free loopback port and relays each connection to `target`. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = createServer();
    const proxy = new TcpProxy(server);
    server.on('connection', (inbound) => proxy.relay(inbound, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Breaks the link: open connections are reset, new ones are reset as they arrive. */
  cut(): void {
    this.cutOff = true;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.cutOff = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private relay(inbound: Socket, target: { host: string; port: number }): void {
    if (this.cutOff) {
      inbound.destroy();
      return;
    }
    const outbound = connect(target.port, target.host);
    for (const [a, b] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      this.sockets.add(a);
      a.pipe(b);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.sockets.delete(a);
        b.destroy();
      });
    }
  }
}
