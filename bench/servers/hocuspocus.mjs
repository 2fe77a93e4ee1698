// The Hocuspocus peer as its users run it: the Server with no extensions (documents in memory, no persistence).
import { Server } from '@hocuspocus/server';

const server = new Server({
  address: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
  quiet: true,
});
await server.listen();
console.log(`listening on http://${process.env.HOST ?? '127.0.0.1'}:${server.address.port}`);
