// A tiny feedd client over fetch, typed end to end by the code generated
// from schema.graphqls: variables and results are checked at compile time,
// so a schema change that breaks these operations fails `npm run check`.
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { print } from "graphql";
import {
  BlockUserDocument,
  FollowingFeedDocument,
  FollowUserDocument,
  LiveFeedDocument,
  MuteUserDocument,
  NewerPostsDocument,
  PublishPostDocument,
  ScheduleLiveDocument,
  type FeedPostFragment,
  type FollowingFeedQuery,
  type LiveFeedQuery,
  type LiveState,
  type MediaInput,
} from "./generated/graphql.js";

/** Whom requests are made as: a bearer token, or a dev-auth viewer id. */
export type Auth = { token: string } | { viewerId: string };

/** A GraphQL error as feedd sends it: every one carries extensions.code. */
export class FeeddError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export class Feedd {
  constructor(
    private readonly endpoint: string,
    private readonly auth: Auth,
  ) {}

  async request<R, V>(doc: TypedDocumentNode<R, V>, variables: V): Promise<R> {
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if ("token" in this.auth) headers["Authorization"] = `Bearer ${this.auth.token}`;
    else headers["X-Viewer-Id"] = this.auth.viewerId;
    const res = await fetch(this.endpoint, {
      method: "POST",
      headers,
      body: JSON.stringify({ query: print(doc), variables }),
    });
    const body = (await res.json()) as {
      data?: R | null;
      errors?: { message: string; extensions?: { code?: string } }[];
    };
    const first = body.errors?.[0];
    if (first) throw new FeeddError(first.message, first.extensions?.code ?? "INTERNAL");
    if (!body.data) throw new FeeddError(`HTTP ${res.status} without data`, "INTERNAL");
    return body.data;
  }

  /** Pages the following feed to the end, pageSize posts at a time. */
  async *posts(pageSize = 20): AsyncGenerator<FeedPostFragment> {
    let after: string | null = null;
    for (;;) {
      const { followingFeed }: FollowingFeedQuery = await this.request(FollowingFeedDocument, { first: pageSize, after });
      for (const edge of followingFeed.edges) yield edge.node;
      if (!followingFeed.pageInfo.hasNextPage) return;
      after = followingFeed.pageInfo.endCursor;
    }
  }

  /** Posts newer than the cursor at the top of the feed (pull-to-refresh). */
  async newer(topCursor: string): Promise<{ posts: FeedPostFragment[]; gap: boolean }> {
    const { followingFeed } = await this.request(NewerPostsDocument, { last: 20, before: topCursor });
    return { posts: followingFeed.edges.map((e) => e.node), gap: followingFeed.pageInfo.hasPreviousPage };
  }

  /** Publishes text, media (URLs the app uploaded to its storage), or both. */
  async publish(text: string | null, opts: { media?: MediaInput[]; contentWarning?: string } = {}): Promise<FeedPostFragment> {
    const { media = null, contentWarning = null } = opts;
    return (await this.request(PublishPostDocument, { text, media, contentWarning })).publishPost.post;
  }

  async follow(userId: string): Promise<number> {
    return (await this.request(FollowUserDocument, { userId })).followUser.user.followerCount;
  }

  /** Blocks a user: nothing of theirs reaches the viewer, nor the other way. */
  async block(userId: string): Promise<boolean> {
    return (await this.request(BlockUserDocument, { userId })).blockUser.user.viewerHasBlocked;
  }

  /** Mutes a user for seconds (omitted: until unmuted); returns when it ends, null for never. */
  async mute(userId: string, seconds?: number): Promise<string | null> {
    const { muteUser } = await this.request(MuteUserDocument, { userId, durationSeconds: seconds ?? null });
    return muteUser.user.viewerMuteExpiresAt ?? null;
  }

  async schedule(title: string, at: Date, coverUrl?: string): Promise<LiveState> {
    const { scheduleLive } = await this.request(ScheduleLiveDocument, { title, at: at.toISOString(), coverUrl: coverUrl ?? null });
    return scheduleLive.session.state;
  }

  async liveNow(): Promise<LiveFeedQuery["liveFeed"]["edges"]> {
    const { liveFeed } = await this.request(LiveFeedDocument, { first: 10 });
    return liveFeed.edges.filter((e) => e.state === "LIVE");
  }
}

/** One line of a feed, as an app would render it. */
export function render(p: FeedPostFragment): string {
  const when = new Date(p.createdAt).toISOString();
  const likes = p.counts.likes === 1 ? "1 like" : `${p.counts.likes} likes`;
  // An app hides the post behind its warning, and blurs sensitive media.
  const body = p.contentWarning ? `[CW: ${p.contentWarning}]` : p.text;
  const media = p.media.map((m) => `${m.kind.toLowerCase()}${m.sensitive ? " (sensitive)" : ""}: ${m.altText ?? m.url}`);
  return `@${p.author.handle} (${p.author.displayName}) at ${when}: ${body}${media.length ? ` {${media.join("; ")}}` : ""} [${likes}${p.viewerHasLiked ? ", liked" : ""}]`;
}
