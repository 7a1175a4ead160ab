// Package content is what a post is and what it may contain: the [Post]
// and its [Media], the content rules every text, media item and URL that
// users write must pass, and how a post's content is stored. It knows no
// Redis command and no feature of feedcore: the service applies its rules
// under its own options and stores what they return.
//
// # Rules
//
//   - Text. [CheckText] is the rule of every text users write and
//     everyone reads (post texts, live titles, keyword filters, report
//     comments, moderation reasons): valid UTF-8, no control characters
//     but newline and tab, at most a given number of characters once
//     trimmed, at least one visible character (zero-width, format and
//     filler characters are not). A post needs text or media: its text
//     may be blank only beside media ([CheckPostText]).
//   - Media. [CheckMedia]: at most [MaxImages] images and GIFs, or one
//     video alone; sizes, durations and alt text within bounds. A content
//     warning follows the text rule ([CheckContentWarning]).
//   - URLs. feedd never fetches the URLs of media and live covers, so what
//     [CheckURL] checks is what every reader's app will fetch: printable
//     ASCII, absolute https, no user name or password, and a host the
//     [URLPolicy] allows (the service's from --media-hosts; [ImportURLs]
//     for imported data).
//   - Refusals. A refusal is a BAD_USER_INPUT error (apierr) that names
//     the field and the rule; a text that passes comes back trimmed, a
//     blank optional one as "" (none).
//
// # Stored content
//
// A post's media are stored as compact JSON ([EncodeMedia],
// [DecodeMedia]) in its hash and its publish event; [Encoded] is its
// content as the publish event and the idempotency record carry it, and
// [ParseRecord] reads such a record back, as records made before media
// existed (a text alone) too.
//
// The package imports feedcore/store (for ids) and never feedcore;
// feedcore keeps Post, Media, MediaKind and the media kinds as aliases.
package content
