// The "new posts" pill over graphql-ws: the README's example.
// Run `go run ./cmd/feedd`, then `node subscribe.mjs`, then publish as an
// account viewer 1102 follows (the README shows the curl).
import { createClient } from 'graphql-ws';
import WebSocket from 'ws'; // Node 20 has no global WebSocket

const http = process.env.FEEDD_URL ?? 'http://localhost:8080/query';
const viewer = { 'X-Viewer-Id': process.env.FEEDD_VIEWER ?? '1102' }; // or { Authorization: 'Bearer <jwt>' }

// since: the cursor of the newest post on screen (here: the top of the feed now).
const page = await fetch(http, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', ...viewer },
  body: JSON.stringify({ query: '{ followingFeed(first: 1) { edges { cursor } } }' }),
}).then((r) => r.json());
const since = page.data.followingFeed.edges[0]?.cursor ?? null;

const client = createClient({
  url: http.replace(/^http/, 'ws'),
  webSocketImpl: WebSocket,
  connectionParams: viewer, // browsers cannot set WebSocket headers: identity goes in connection_init
});
console.error('listening for new posts; publish as someone you follow');
for await (const { data, errors } of client.iterate({
  query: `subscription ($since: String) {
    followingFeedUpdates(since: $since) { newPostCount newPostAuthors { handle } deletedPostIds }
  }`,
  variables: { since },
})) {
  if (errors) throw new Error(JSON.stringify(errors));
  console.log(JSON.stringify(data.followingFeedUpdates)); // e.g. {"newPostCount":1,"newPostAuthors":[{"handle":"hugo27"}],"deletedPostIds":[]}
}
