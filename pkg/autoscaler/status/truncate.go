package status

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// What the API accepts of the text podpilot writes for people. A message over its bound would
// have the whole status write (or the event) refused, every round, leaving no word of the failure.
const (
	// maxConditionMessage is metav1.Condition's bound on a message (32768 bytes).
	maxConditionMessage = 32768
	// maxEventNote is events/v1's bound on an event's note (1 KiB).
	maxEventNote = 1024
)

// A message over its bound first has each run of non-space text longer than maxRun cut to its
// first and last runEnd bytes: such runs are values copied from the spec or a query (a label
// value, a selector, a PromQL expression), and their ends say which one it was. If it is
// still over, its middle goes.
const (
	maxRun = 256
	runEnd = 64
)

// TruncateMessage returns msg if it fits in limit bytes; otherwise a shorter text of at most
// limit bytes that keeps the message's words, the ends of its long values and its end, where
// the cause usually is, marking each cut with the number of bytes left out. Cuts fall between
// UTF-8 characters.
func TruncateMessage(msg string, limit int) string {
	if len(msg) <= limit {
		return msg
	}
	msg = elideLongRuns(msg)
	if len(msg) <= limit {
		return msg
	}
	return elideMiddle(msg, limit)
}

// elideLongRuns cuts every run of non-space text longer than maxRun bytes to its ends.
func elideLongRuns(msg string) string {
	var b strings.Builder
	for len(msg) > 0 {
		start := strings.IndexFunc(msg, func(r rune) bool { return r != ' ' && r != '\n' && r != '\t' })
		if start < 0 {
			b.WriteString(msg)
			break
		}
		end := strings.IndexAny(msg[start:], " \n\t")
		if end < 0 {
			end = len(msg)
		} else {
			end += start
		}
		b.WriteString(msg[:start])
		if run := msg[start:end]; len(run) > maxRun {
			b.WriteString(elideMiddle(run, 2*runEnd+len(omitted(len(run)))))
		} else {
			b.WriteString(run)
		}
		msg = msg[end:]
	}
	return b.String()
}

// elideMiddle keeps the head and the tail of s, at most limit bytes in all with the mark of
// what was left out.
func elideMiddle(s string, limit int) string {
	keep := limit - len(omitted(len(s)))
	if keep <= 0 {
		return s[:runeStart(s, limit)]
	}
	head := runeStart(s, keep/2)
	tail := runeEnd(s, len(s)-(keep-keep/2))
	return s[:head] + omitted(tail-head) + s[tail:]
}

// omitted marks n bytes left out.
func omitted(n int) string {
	return fmt.Sprintf("...(%d bytes omitted)...", n)
}

// runeStart returns i, moved back to the start of the UTF-8 character it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// runeEnd returns i, moved on to the start of the next UTF-8 character if it falls inside one.
func runeEnd(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// truncatingRecorder cuts every event's note to what events/v1 accepts, so that an event about
// a huge value is still sent.
type truncatingRecorder struct {
	events.EventRecorder
}

// Eventf formats the note, truncates it and records the event.
func (r truncatingRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", TruncateMessage(fmt.Sprintf(note, args...), maxEventNote))
}
