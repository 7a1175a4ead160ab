// The CI check of feedd's subscriptions with real clients (.ci/realtime.sh
// runs it against a `feedd serve` of the demo data, with dev auth):
//
//   graphql-ws          followingFeedUpdates over graphql-transport-ws, and liveFeedUpdates
//   graphql-sse         followingFeedUpdates over server-sent events, distinct connections mode
//   Apollo Client       followingFeedUpdates through GraphQLWsLink (graphql-ws underneath)
//   subscribe.mjs       the README's example, as a child process
//
// Each subscribes as the viewer from the cursor of the newest post in its
// feed; an account the viewer follows publishes a post over HTTP, and each
// must be told newPostCount 1; the post is deleted, and each must be told
// its id in deletedPostIds. Then the account schedules, starts and ends a
// live session, and the liveFeedUpdates subscriber must see PREVIEW, LIVE
// and REPLAY. Every wait has a deadline; a failure, a GraphQL error or a
// deadline exits 1 with what each client had received.
//
//   FEEDD_URL=http://127.0.0.1:8080/query node check.mjs
//
// FEEDD_VIEWER (default 1102, the demo's active reader) is the viewer;
// FEEDD_METRICS_URL (default /metrics beside FEEDD_URL) is read to know
// that the server holds the subscriptions before the live session starts;
// FEEDD_CHECK_TIMEOUT_MS (default 20000) bounds each wait.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createClient as createWsClient } from 'graphql-ws';
import { createClient as createSseClient } from 'graphql-sse';
import { ApolloClient, InMemoryCache, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import WebSocket from 'ws';

const http = process.env.FEEDD_URL ?? 'http://127.0.0.1:8080/query';
const ws = http.replace(/^http/, 'ws');
const metricsURL = process.env.FEEDD_METRICS_URL ?? new URL('/metrics', http).href;
const viewer = process.env.FEEDD_VIEWER ?? '1102';
const timeout = Number(process.env.FEEDD_CHECK_TIMEOUT_MS ?? 20000);
// The gauge of open subscriptions on feedd's /metrics.
const subscriptionsGauge = 'feedd_realtime_subscriptions';

const FOLLOWING = `subscription Following($since: String) {
  followingFeedUpdates(since: $since) { newPostCount newPostAuthors { id handle } deletedPostIds }
}`;
const LIVE = `subscription Live {
  liveFeedUpdates { state session { id title anchor { handle } } }
}`;

const started = Date.now();
const elapsed = () => `${Date.now() - started} ms`;
const cleanups = [];

function fail(message) {
  console.error(`realtime check FAILED after ${elapsed()}: ${message}`);
  for (const inbox of inboxes) console.error(`  ${inbox.name} received: ${inbox.describe()}`);
  for (const c of cleanups) {
    try { c(); } catch { /* exiting anyway */ }
  }
  process.exit(1);
}

// Inbox collects what one subscription received, and lets the check wait
// for a message that satisfies a condition, up to the deadline.
class Inbox {
  constructor(name) {
    this.name = name;
    this.items = [];
    this.error = null;
    this.waiters = new Set();
  }
  push(item) {
    this.items.push(item);
    this.wake();
  }
  close(error) {
    this.error ??= error ?? new Error('the subscription ended'); // the first reason stands
    this.wake();
  }
  wake() {
    for (const w of this.waiters) w();
  }
  describe() {
    const got = this.items.map((x) => JSON.stringify(x)).join(', ') || 'nothing';
    return this.error ? `${got}; then ${errorText(this.error)}` : got;
  }
  // until resolves with the first message (from index from on) for which
  // ok is true, or rejects when the subscription fails or at the deadline.
  until(what, ok, from = 0) {
    return new Promise((resolve, reject) => {
      const check = () => {
        const i = this.items.findIndex((x, j) => j >= from && ok(x));
        if (i >= 0) return done(() => resolve({ item: this.items[i], index: i }));
        if (this.error) return done(() => reject(new Error(`${this.name}: ${errorText(this.error)} before ${what}`)));
      };
      const timer = setTimeout(() => done(() => reject(new Error(`${this.name}: no ${what} within ${timeout} ms`))), timeout);
      const done = (f) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        f();
      };
      this.waiters.add(check);
      check();
    });
  }
}
const inboxes = [];
const inbox = (name) => {
  const b = new Inbox(name);
  inboxes.push(b);
  return b;
};

function errorText(e) {
  if (e === undefined || e === null) return 'no error';
  if (Array.isArray(e)) return `GraphQL errors ${JSON.stringify(e)}`;
  if (typeof e.code === 'number' && 'reason' in e) return `connection closed ${e.code} ${e.reason}`; // a CloseEvent
  return e.message ?? String(e);
}

// post sends a GraphQL operation over HTTP as user and returns its data.
async function post(user, query, variables = {}) {
  const res = await fetch(http, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Viewer-Id': user },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(timeout),
  });
  const body = await res.json();
  if (!res.ok || body.errors) throw new Error(`${query.split('{')[0].trim() || 'query'} as ${user}: HTTP ${res.status} ${JSON.stringify(body.errors ?? body)}`);
  return body.data;
}

// drain feeds an async iterator of execution results into box.
async function drain(box, results) {
  try {
    for await (const r of results) {
      if (r.errors) return box.close(r.errors);
      box.push(r.data);
    }
    box.close();
  } catch (e) {
    box.close(e);
  }
}

// openSubscriptions gets the viewer's subscriptions going, one per client.
function openSubscriptions(since) {
  const auth = { 'X-Viewer-Id': viewer };
  const boxes = {};

  const wsClient = createWsClient({ url: ws, webSocketImpl: WebSocket, connectionParams: auth, retryAttempts: 0 });
  cleanups.push(() => wsClient.dispose());
  boxes.ws = inbox('graphql-ws');
  drain(boxes.ws, mapData(wsClient.iterate({ query: FOLLOWING, variables: { since } }), 'followingFeedUpdates'));
  boxes.live = inbox('graphql-ws liveFeedUpdates');
  drain(boxes.live, mapData(wsClient.iterate({ query: LIVE }), 'liveFeedUpdates'));

  const sseClient = createSseClient({ url: http, headers: auth, singleConnection: false, retryAttempts: 0 });
  cleanups.push(() => sseClient.dispose());
  boxes.sse = inbox('graphql-sse');
  drain(boxes.sse, mapData(sseClient.iterate({ query: FOLLOWING, variables: { since } }), 'followingFeedUpdates'));

  const apolloWs = createWsClient({ url: ws, webSocketImpl: WebSocket, connectionParams: auth, retryAttempts: 0 });
  cleanups.push(() => apolloWs.dispose());
  const apollo = new ApolloClient({ link: new GraphQLWsLink(apolloWs), cache: new InMemoryCache() });
  cleanups.push(() => apollo.stop());
  boxes.apollo = inbox('Apollo Client GraphQLWsLink');
  const sub = apollo.subscribe({ query: gql(FOLLOWING), variables: { since }, fetchPolicy: 'no-cache' }).subscribe({
    // Apollo Client 4 reports GraphQL errors as result.error.
    next: (r) => (r.error || r.errors ? boxes.apollo.close(r.error ?? r.errors) : boxes.apollo.push(r.data.followingFeedUpdates)),
    error: (e) => boxes.apollo.close(e),
    complete: () => boxes.apollo.close(),
  });
  cleanups.push(() => sub.unsubscribe());
  return boxes;
}

// mapData turns execution results into their one field's value.
async function* mapData(results, field) {
  for await (const r of results) yield r.errors ? r : { data: r.data[field] };
}

// startExample runs the README's example (subscribe.mjs) and resolves with
// its inbox once it says it is listening (it has its since cursor then).
function startExample() {
  const box = inbox('subscribe.mjs (the README example)');
  const child = spawn(process.execPath, [fileURLToPath(new URL('subscribe.mjs', import.meta.url))], {
    env: { ...process.env, FEEDD_URL: http, FEEDD_VIEWER: viewer },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(() => child.kill());
  let stderr = '';
  let listening;
  const ready = new Promise((resolve) => { listening = resolve; });
  createInterface({ input: child.stdout }).on('line', (line) => {
    try { box.push(JSON.parse(line)); } catch { box.push({ unparsed: line }); }
  });
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderr += line + '\n';
    if (line.startsWith('listening')) listening();
  });
  child.on('exit', (code, signal) => {
    box.close(new Error(`exited (${code ?? signal}): ${stderr.trim().slice(-500)}`));
    listening();
  });
  return ready.then(() => {
    if (box.error) throw new Error(`${box.name}: ${errorText(box.error)}`);
    return box;
  });
}

// openOnServer reads the server's gauge of open subscriptions.
async function openOnServer() {
  const res = await fetch(metricsURL, { signal: AbortSignal.timeout(timeout) });
  if (!res.ok) throw new Error(`${metricsURL}: HTTP ${res.status}`);
  const text = await res.text();
  let sum = null;
  for (const line of text.split('\n')) {
    if (line.startsWith(subscriptionsGauge + ' ') || line.startsWith(subscriptionsGauge + '{')) {
      sum = (sum ?? 0) + Number(line.split(' ').pop());
    }
  }
  if (sum === null) throw new Error(`${metricsURL} has no ${subscriptionsGauge}`);
  return sum;
}

// untilOpen waits until the server holds at least n subscriptions; a
// subscription that failed meanwhile fails it at once.
async function untilOpen(n) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    const failed = inboxes.find((b) => b.error);
    if (failed) throw new Error(`${failed.name}: ${errorText(failed.error)}`);
    last = await openOnServer();
    if (last >= n) return;
    if (Date.now() > end) throw new Error(`${subscriptionsGauge} is ${last} after ${timeout} ms, want at least ${n}`);
    await new Promise((r) => setTimeout(r, 25)); // the next look at the gauge, not a synchronisation
  }
}

async function main() {
  const global = setTimeout(() => fail(`the whole check took over ${4 * timeout} ms`), 4 * timeout);
  global.unref();

  const me = await post(viewer, `{ viewer { handle following(first: 1) { edges { node { databaseId handle } } } }
    followingFeed(first: 1) { edges { cursor } } }`);
  const author = me.viewer.following.edges[0]?.node;
  if (!author) throw new Error(`viewer ${viewer} follows nobody: run against the demo data (go run ./cmd/feedd)`);
  const since = me.followingFeed.edges[0]?.cursor ?? null;
  console.log(`viewer @${me.viewer.handle} (${viewer}) subscribes from the newest post in its feed; @${author.handle} (${author.databaseId}) publishes`);

  const boxes = openSubscriptions(since);
  const followers = [boxes.ws, boxes.sse, boxes.apollo, await startExample()];
  // Every subscription the server holds (the example's too) before the
  // live session: liveFeedUpdates has no cursor to catch up from.
  await untilOpen(followers.length + 1);
  console.log(`${followers.length + 1} subscriptions open on the server (${elapsed()})`);

  const published = await post(author.databaseId, `mutation ($text: String!) { publishPost(input: { text: $text }) { post { id } } }`,
    { text: `realtime check ${started}` });
  const postID = published.publishPost.post.id;
  const t0 = Date.now();
  const counted = await Promise.all(followers.map(async (b) => {
    const { item, index } = await b.until('update with newPostCount 1', (u) => u.newPostCount >= 1);
    if (item.newPostCount !== 1) throw new Error(`${b.name}: newPostCount ${item.newPostCount}, want 1 (one post since the cursor)`);
    const handles = (item.newPostAuthors ?? []).map((a) => a.handle);
    if (!handles.includes(author.handle)) throw new Error(`${b.name}: newPostAuthors ${JSON.stringify(handles)} lacks @${author.handle}`);
    return index + 1;
  }));
  console.log(`newPostCount 1 reached all ${followers.length} clients ${Date.now() - t0} ms after the publish`);

  await post(author.databaseId, `mutation ($id: ID!) { deletePost(id: $id) { deletedPostId } }`, { id: postID });
  const t1 = Date.now();
  await Promise.all(followers.map((b, i) =>
    b.until(`deletedPostIds with ${postID}`, (u) => (u.deletedPostIds ?? []).includes(postID), counted[i])));
  console.log(`deletedPostIds [${postID}] reached all ${followers.length} clients ${Date.now() - t1} ms after the delete`);

  const live = boxes.live;
  const scheduled = await post(author.databaseId, `mutation ($at: DateTime!) {
    scheduleLive(input: { title: "realtime check", scheduledStartAt: $at }) { session { id } } }`,
  { at: new Date(Date.now() + 3600_000).toISOString() });
  const sessionID = scheduled.scheduleLive.session.id;
  let from = 0;
  for (const [state, op] of [['PREVIEW', null], ['LIVE', 'startLive'], ['REPLAY', 'endLive']]) {
    if (op) await post(author.databaseId, `mutation ($id: ID!) { ${op}(id: $id) { session { id } } }`, { id: sessionID });
    const { index } = await live.until(`liveFeedUpdates ${state} of ${sessionID}`,
      (u) => u.session?.id === sessionID && u.state === state, from);
    from = index + 1;
  }
  console.log(`liveFeedUpdates: PREVIEW, LIVE, REPLAY of @${author.handle}'s session, in order`);

  for (const c of cleanups) c();
  console.log(`realtime check passed in ${elapsed()}: graphql-ws, graphql-sse, Apollo Client GraphQLWsLink and the README example`);
  process.exit(0);
}

main().catch((e) => fail(e.message ?? String(e)));
