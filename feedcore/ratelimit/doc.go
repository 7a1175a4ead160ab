// Package ratelimit spends allowances of points kept in Redis: the generic
// cell rate algorithm in a Lua script, so every replica sharing the store
// shares each allowance (a viewer's, on the viewer's stream shard; a
// client address's), and an operation's charge that rides its first
// Redis call.
//
// # Invariants
//
//   - No round trip of its own. A [Charge] is one more command in the
//     pipeline of the operation's first Redis call ([ChargedClient] carries
//     it from the context, see [WithCharge]); calls made meanwhile wait for
//     its verdict, and once refused every later call fails with
//     RATE_LIMITED without reaching Redis.
//   - A refused mutation writes nothing. A mutation's charge
//     ([Limiter.NewWriteCharge]) rides only a first call that reads; before
//     a first write it is spent alone. A publish's log script spends it in
//     the same step as the append ([Charge.SpendIn], [LuaSpend]).
//   - Accounts. A viewer's charge also reads the account's deletion and
//     suspension markers on the same shard: a deleted account's request is
//     UNAUTHENTICATED and a suspended one's FORBIDDEN, at no round trip of
//     their own, with the limit on or off.
package ratelimit
