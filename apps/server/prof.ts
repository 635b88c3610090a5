import { startTestServer } from '@paddock/testing/server';

const s = await startTestServer({ name: 'sqlite' }, { PADDOCK_LOG_LEVEL: 'warn' });
const r = await s.request('POST', '/v2/threads', { body: { agent: { instructions: 'x' } } });
const { thread_id } = (await r.json()) as { thread_id: string };
console.log(JSON.stringify({ url: `${s.url}/v2/threads/${thread_id}`, token: s.token }));
await new Promise((res) => setTimeout(res, 10000));
await s.close();
process.exit(0);
