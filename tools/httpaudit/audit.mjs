// Runs graphql-http's server audits (the GraphQL-over-HTTP spec's
// conformance suite, from the reference implementation) against the feedd
// at FEED_AUDIT_URL (default http://127.0.0.1:8080/query), for both
// application/json and application/graphql-response+json. Prints one line
// per audit and exits 1 on any warning or error; notices are printed only.
import { serverAudits } from 'graphql-http';

const url = process.env.FEED_AUDIT_URL ?? 'http://127.0.0.1:8080/query';
let failed = 0;
let counts = { ok: 0, notice: 0, warn: 0, error: 0 };
for (const audit of serverAudits({ url, fetchFn: fetch })) {
  const result = await audit.fn();
  counts[result.status]++;
  if (result.status === 'warn' || result.status === 'error') {
    failed++;
    let body = '';
    try { body = await result.response.text(); } catch { /* already read */ }
    console.log(`${result.status.toUpperCase()} ${audit.id} ${audit.name}: ${result.reason}`);
    if (body) console.log(`    response ${result.response.status}: ${body.slice(0, 300)}`);
  } else if (result.status === 'notice') {
    console.log(`notice ${audit.id} ${audit.name}: ${result.reason}`);
  }
}
console.log(`graphql-http audit of ${url}: ${counts.ok} ok, ${counts.notice} notice, ${counts.warn} warn, ${counts.error} error`);
process.exit(failed ? 1 : 0);
