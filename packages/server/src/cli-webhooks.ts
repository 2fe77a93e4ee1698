/**
 * `wave-server webhooks add|list|remove|failed|replay`: endpoints and failed deliveries in the store. A running
 * server reads endpoints from the store at every delivery, so changes take effect at once on every server.
 */
import type { ParseArgsConfig } from 'node:util';
import { loadSecretBox } from './secret-box.js';
import type { OutboxEvent, Store, WebhookEndpoint } from './store/types.js';

/** What cli.ts shares with this file (its argument parsing and store opening, so flags behave the same). */
export interface CliContext {
  parse<T extends NonNullable<ParseArgsConfig['options']>>(
    args: string[],
    options: T,
    positionals?: number,
  ): { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };
  usage(message: string): Error;
  openStore(flag: string | undefined): { store: Store; url: string };
  secretKeyFile(flag: string | undefined, storeUrl: string): string;
  help(): number;
}

export const WEBHOOKS_HELP = `  wave-server webhooks add --key KEY --url URL [--events E,E…] [--json] [--store URL] [--secret-key-file F]
  wave-server webhooks list [--key KEY] [--json] [--store URL]
  wave-server webhooks remove ID [--store URL]
  wave-server webhooks failed [--key KEY] [--json] [--store URL]
  wave-server webhooks replay ID… | --all [--store URL]`;

export async function webhooksCommand(args: string[], cli: CliContext): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'add':
      return add(rest, cli);
    case 'list':
      return list(rest, cli);
    case 'remove':
      return remove(rest, cli);
    case 'failed':
      return failed(rest, cli);
    case 'replay':
      return replay(rest, cli);
    default:
      throw cli.usage(sub === undefined ? 'webhooks: expected add, list, remove, failed or replay' : `webhooks: unknown command ${JSON.stringify(sub)}`);
  }
}

async function add(args: string[], cli: CliContext): Promise<number> {
  const { values } = cli.parse(args, {
    key: { type: 'string' },
    url: { type: 'string' },
    events: { type: 'string' },
    json: { type: 'boolean' },
    'secret-key-file': { type: 'string' },
    store: { type: 'string' },
  });
  if (values['help']) return cli.help();
  const apiKey = values['key'] as string | undefined;
  const url = values['url'] as string | undefined;
  if (apiKey === undefined) throw cli.usage('webhooks add: --key is required');
  if (url === undefined) throw cli.usage('webhooks add: --url is required');
  const events = typeof values['events'] === 'string' ? values['events'].split(',').map((e) => e.trim()).filter(Boolean) : undefined;
  const { store, url: storeUrl } = cli.openStore(values['store'] as string | undefined);
  try {
    const key = await store.findKey(apiKey);
    if (!key || key.revokedAt !== null) throw cli.usage(`webhooks add: no active API key ${apiKey}`);
    const box = loadSecretBox(cli.secretKeyFile(values['secret-key-file'] as string | undefined, storeUrl));
    let created;
    try {
      created = await store.createWebhookEndpoint({ apiKey, url, ...(events ? { events: events as never } : {}) }, { seal: (id, s) => box.seal(id, s) });
    } catch (error) {
      if (error instanceof TypeError) throw cli.usage(`webhooks add: ${error.message}`);
      throw error;
    }
    if (values['json']) {
      console.log(JSON.stringify({ id: created.record.id, secret: created.secret }));
    } else {
      console.log(`webhook endpoint created
  id:      ${created.record.id}
  url:     ${created.record.url}
  events:  ${created.record.events.join(', ')}
  secret:  ${created.secret}
The signing secret is shown only this once: give it to the receiver, which verifies webhook-signature with it.`);
    }
    return 0;
  } finally {
    await store.close();
  }
}

async function list(args: string[], cli: CliContext): Promise<number> {
  const { values } = cli.parse(args, { key: { type: 'string' }, json: { type: 'boolean' }, store: { type: 'string' } });
  if (values['help']) return cli.help();
  const { store } = cli.openStore(values['store'] as string | undefined);
  try {
    const endpoints = await store.listWebhookEndpoints(values['key'] as string | undefined);
    if (values['json']) console.log(JSON.stringify(endpoints, null, 2));
    else if (endpoints.length === 0) console.log('no webhook endpoints');
    else for (const e of endpoints) console.log(describeEndpoint(e));
    return 0;
  } finally {
    await store.close();
  }
}

async function remove(args: string[], cli: CliContext): Promise<number> {
  const { values, positionals } = cli.parse(args, { store: { type: 'string' } }, 1);
  if (values['help']) return cli.help();
  const id = positionals[0];
  if (id === undefined) throw cli.usage('webhooks remove: expected the endpoint id');
  const { store } = cli.openStore(values['store'] as string | undefined);
  try {
    if (await store.removeWebhookEndpoint(id)) {
      console.log(`removed ${id}`);
      return 0;
    }
    console.error(`no webhook endpoint ${id}`);
    return 1;
  } finally {
    await store.close();
  }
}

async function failed(args: string[], cli: CliContext): Promise<number> {
  const { values } = cli.parse(args, { key: { type: 'string' }, json: { type: 'boolean' }, store: { type: 'string' } });
  if (values['help']) return cli.help();
  const { store } = cli.openStore(values['store'] as string | undefined);
  try {
    const events = await store.listEvents('failed', values['key'] as string | undefined);
    if (values['json']) console.log(JSON.stringify(events.map(describeEventJson), null, 2));
    else if (events.length === 0) console.log('no failed webhook events');
    else for (const e of events) console.log(describeEvent(e));
    return 0;
  } finally {
    await store.close();
  }
}

async function replay(args: string[], cli: CliContext): Promise<number> {
  const { values, positionals } = cli.parse(args, { all: { type: 'boolean' }, store: { type: 'string' } }, 1_000);
  if (values['help']) return cli.help();
  if (values['all'] === true && positionals.length > 0) throw cli.usage('webhooks replay: give event ids or --all, not both');
  if (values['all'] !== true && positionals.length === 0) throw cli.usage('webhooks replay: expected event ids or --all');
  const { store } = cli.openStore(values['store'] as string | undefined);
  try {
    const n = await store.replayEvents(values['all'] === true ? 'all' : positionals, Date.now());
    console.log(`${n} event${n === 1 ? '' : 's'} queued for delivery again`);
    return values['all'] === true || n === positionals.length ? 0 : 1;
  } finally {
    await store.close();
  }
}

function describeEndpoint(e: WebhookEndpoint): string {
  return [e.id, `key=${e.apiKey}`, `url=${e.url}`, `events=${e.events.join(',')}`, `created=${new Date(e.createdAt).toISOString()}`].join('  ');
}

function describeEventJson(e: OutboxEvent): Record<string, unknown> {
  return { id: e.id, endpointId: e.endpointId, type: e.type, docId: e.doc.docId, attempts: e.attempts, lastError: e.lastError, createdAt: e.createdAt };
}

function describeEvent(e: OutboxEvent): string {
  return [e.id, e.type, `endpoint=${e.endpointId}`, `doc=${JSON.stringify(e.doc.docId)}`, `attempts=${e.attempts}`, `error=${JSON.stringify(e.lastError)}`, `created=${new Date(e.createdAt).toISOString()}`].join('  ');
}
