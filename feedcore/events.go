package feedcore

import (
	"context"
	"strconv"

	"github.com/redis/rueidis"
)

// Event types on the events stream.
const (
	evPublish  = "pub" // fan a new post out to the author's push targets
	evDelete   = "del" // fan a removal out
	evPromote  = "pro" // an author crossed the big-V threshold
	evActivate = "act" // a returning reader: join active sets, backfill
	evReplay   = "rep" // fan an ended live session out to replay inboxes
)

// event is one entry of the events stream.
type event struct {
	Type string
	User ID   // author, or the reader for evActivate
	Item Item // the post, for evPublish and evDelete
}

func (s *Service) emitCmd(e event) rueidis.Completed {
	return s.c.B().Xadd().Key(s.k.events()).Id("*").FieldValue().
		FieldValue("t", e.Type).FieldValue("u", FormatID(e.User)).
		FieldValue("p", FormatID(e.Item.ID)).FieldValue("s", scoreArg(e.Item.TS)).Build()
}

// emit appends e to the events stream; once it returns, the event is durable
// in Redis and a worker will process it.
func (s *Service) emit(ctx context.Context, e event) error {
	return s.do(ctx, s.emitCmd(e)).Error()
}

func parseEvent(fv map[string]string) (event, error) {
	u, err := strconv.ParseUint(fv["u"], 10, 64)
	if err != nil {
		return event{}, err
	}
	p, _ := strconv.ParseUint(fv["p"], 10, 64)
	ts, _ := parseInt(fv["s"])
	return event{Type: fv["t"], User: u, Item: Item{TS: ts, ID: p}}, nil
}

func parseInt(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }
