package stream

import (
	"context"
	"reflect"
)

// selectMany blocks on more than two inputs with reflect.Select; a merge of
// many upstream actors pays a little for it, but only when no input was
// ready in the non-blocking pass.
func selectMany(ctx context.Context, live []<-chan Message, w Wait) (int, Message, bool, error) {
	cases := make([]reflect.SelectCase, 0, len(live)+2)
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
	for _, ch := range live {
		c := reflect.SelectCase{Dir: reflect.SelectRecv}
		if ch != nil {
			c.Chan = reflect.ValueOf(ch)
		}
		cases = append(cases, c)
	}
	wake := reflect.SelectCase{Dir: reflect.SelectRecv}
	if w.Wake != nil {
		wake.Chan = reflect.ValueOf(w.Wake)
	}
	cases = append(cases, wake)
	chosen, v, ok := reflect.Select(cases)
	if chosen == 0 {
		return 0, Message{}, false, ctx.Err()
	}
	if chosen > len(live) {
		return -1, Message{}, false, nil
	}
	if !ok {
		return chosen - 1, Message{}, false, nil
	}
	return chosen - 1, v.Interface().(Message), true, nil
}
