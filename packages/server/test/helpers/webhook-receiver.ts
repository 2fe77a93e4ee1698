/**
 * A real HTTP receiver for webhook tests: records every request, verifies its signature with the
 * `standardwebhooks` library (as an integrator's receiver would), and answers with `status` (200 by default) or,
 * with `hang`, not at all. It can stop and start again on the same port (a receiver that is down for a while).
 * Waiting is event-driven: `waitFor` re-checks its condition on every request.
 */
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Delivery {
  id: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: { type: string; timestamp: string; data: Record<string, unknown> & { docId: string; version: number } };
  /** The signature verified with the endpoint's secret. */
  verified: boolean;
  /** The status this receiver answered (undefined: it hung). */
  answered: number | undefined;
}

export class WebhookReceiver {
  readonly requests: Delivery[] = [];
  /** Status to answer; `hang` leaves the request open. */
  status = 200;
  hang = false;
  /** Set once `webhooks add` printed it; requests before that count as unverified. */
  secret: string | undefined;
  private readonly events = new EventEmitter();
  private server: Server | undefined;
  private readonly hanging = new Set<ServerResponse>();
  port = 0;

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await receiver.listen(0);
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** Requests answered 2xx with a valid signature. */
  get delivered(): Delivery[] {
    return this.requests.filter((r) => r.verified && r.answered !== undefined && r.answered < 300);
  }

  private listen(port: number): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let verified = false;
        try {
          if (this.secret !== undefined) {
            new Webhook(this.secret).verify(raw, req.headers as Record<string, string>);
            verified = true;
          }
        } catch {
          verified = false;
        }
        const delivery: Delivery = {
          id: String(req.headers['webhook-id']),
          headers: req.headers,
          raw,
          body: JSON.parse(raw) as Delivery['body'],
          verified,
          answered: this.hang ? undefined : this.status,
        };
        this.requests.push(delivery);
        if (this.hang) this.hanging.add(res);
        else res.writeHead(this.status).end();
        this.events.emit('request');
      });
    });
    this.server = server;
    return new Promise((resolve) => server.listen(port, '127.0.0.1', () => {
      this.port = (server.address() as AddressInfo).port;
      resolve();
    }));
  }

  /** Stops listening (connections refused) until `resume`. */
  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((r) => server.close(() => r(undefined)));
  }

  /** Listens again on the same port. */
  resume(): Promise<void> {
    return this.listen(this.port);
  }

  waitFor<T>(find: (r: WebhookReceiver) => T | undefined | false, what: string, timeoutMs = 30_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = find(this);
        if (found === undefined || found === false) return false;
        cleanup();
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`webhook receiver: ${what} not within ${timeoutMs} ms; got ${JSON.stringify(this.requests.map((r) => [r.body.type, r.id, r.answered]))}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.events.off('request', check);
      };
      this.events.on('request', check);
      check();
    });
  }

  async close(): Promise<void> {
    await this.stop();
  }
}
