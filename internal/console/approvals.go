package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/text"
)

// DefaultApprovalTimeout is how long a mutating call waits for a person.
const DefaultApprovalTimeout = 2 * time.Minute

// errApprovalTimeout is the AskHuman error of a call nobody answered: with
// policy.confirm human the pipeline turns it into DENIED.
var errApprovalTimeout = errors.New("nobody approved the call in the console in time")

// Approvals holds the mutating calls waiting for a person in the console:
// with policy.confirm: human, a call from a client that cannot elicit asks
// here instead of being denied at once. It exists before the app (its
// middleware goes into the pipeline), the console serves it.
//
// The calls wait on a board (cluster.Approvals) in this process's memory
// until Share puts it in the shared store: then the console of every
// replica lists and decides every replica's calls, and each call resumes
// on the replica that holds it.
type Approvals struct {
	// Timeout bounds the wait when the live policy sets none (0 =
	// DefaultApprovalTimeout).
	Timeout time.Duration

	mu     sync.Mutex
	policy func() (human bool, timeout time.Duration) // see SetPolicy
	board  *cluster.Approvals
}

// Approval is one pending call as the console lists it.
type Approval = cluster.Approval

// SetPolicy tells the queue how to read the live policy: calls wait here
// only while it reports confirm: human (until set: never), other modes
// keep their own rules; a timeout > 0 (policy.approvalTimeout) bounds the wait.
func (q *Approvals) SetPolicy(f func() (human bool, timeout time.Duration)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.policy = f
}

// Share keeps the pending calls in store (the replicas' shared state) and,
// until ctx ends, listens there for decisions made on other replicas.
// Replica names this process in the entries. Call it before serving.
func (q *Approvals) Share(ctx context.Context, store state.Store, replica string) {
	b := &cluster.Approvals{Store: store, Replica: replica, TickEvery: approvalProgressEvery}
	b.Listen(ctx)
	q.mu.Lock()
	q.board = b
	q.mu.Unlock()
}

// queue is the board calls wait on: the shared one, else this process's.
func (q *Approvals) queue() *cluster.Approvals {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.board == nil {
		q.board = &cluster.Approvals{Store: state.NewMemory(), TickEvery: approvalProgressEvery}
	}
	return q.board
}

func (q *Approvals) live() (human bool, timeout time.Duration) {
	q.mu.Lock()
	f := q.policy
	q.mu.Unlock()
	if f != nil {
		human, timeout = f()
	}
	if timeout <= 0 {
		timeout = q.Timeout
	}
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	return human, timeout
}

// Middleware gives a call without a way to ask a person in its client
// (AskHuman nil) the console's queue as AskPerson. It runs before Policy
// (pipeline Extra), which asks a person only where one must confirm: the
// confirm mode that applies to this caller is human (the global policy's,
// or a per-identity rule's), or the provider asks for a person.
func (q *Approvals) Middleware() pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, req *pipeline.Request) *pipeline.Response {
			if req.AskHuman == nil && req.AskPerson == nil {
				req.AskPerson = func(ctx context.Context, _ string) (policy.Approval, error) {
					_, timeout := q.live()
					return q.wait(ctx, req, timeout)
				}
			}
			return next(ctx, req)
		}
	}
}

// Get returns a pending call by id (of any replica, when shared).
func (q *Approvals) Get(ctx context.Context, id string) (Approval, bool, error) {
	return q.queue().Get(ctx, id)
}

func (q *Approvals) wait(ctx context.Context, req *pipeline.Request, timeout time.Duration) (policy.Approval, error) {
	now := time.Now()
	a := Approval{
		ID: cluster.NewApprovalID(), Tool: req.Resolved.Canonical, Provider: req.Resolved.Provider, Session: shortSession(req.Session),
		Client: req.Client, Identity: req.Identity, Args: redact.String(text.Clip(string(req.Args), 2000)),
		Since: now, Expires: now.Add(timeout),
	}
	// The client sees why the call takes long (progress notifications,
	// when it asked for them), and does not time out while a person decides.
	waiting := func() {
		provider.ReportProgress(ctx, 0, 0, fmt.Sprintf("waiting for a person to approve %s in the agent-tools console (%s left)",
			a.Tool, time.Until(a.Expires).Round(time.Second)))
	}
	waiting()
	answer, err := q.queue().Wait(ctx, a, waiting)
	if errors.Is(err, cluster.ErrApprovalTimeout) {
		return policy.Declined, fmt.Errorf("%w (%s)", errApprovalTimeout, timeout)
	}
	return answer, err // the pipeline remembers "session" and "always" in the decision store
}

// approvalProgressEvery is how often a waiting call reports progress.
const approvalProgressEvery = 5 * time.Second

// List returns the pending calls (of every replica, when shared), oldest first.
func (q *Approvals) List(ctx context.Context) ([]Approval, error) {
	return q.queue().List(ctx)
}

// Answer approves (once, for the session or always) or declines a pending
// call, on whichever replica it waits; false when there is none by that id.
func (q *Approvals) Answer(ctx context.Context, id string, answer policy.Approval) (bool, error) {
	return q.queue().Decide(ctx, id, answer)
}

func (c *Console) apiApprovals(w http.ResponseWriter, r *http.Request) {
	list := []Approval{}
	if c.opts.Approvals != nil {
		l, err := c.opts.Approvals.List(r.Context())
		if err != nil {
			writeJSON(w, http.StatusServiceUnavailable, errBody("unavailable", "cannot read the pending approvals: "+err.Error()))
			return
		}
		list = l
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": list})
}

func (c *Console) apiAnswer(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Approve *bool `json:"approve"`
		// Remember extends an approval: "session" (this tool, this
		// session) or "always" (this tool), kept in the decision store
		// (`agent-tools decisions` lists and revokes them).
		Remember string `json:"remember,omitempty"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	answer := policy.Declined
	switch {
	case body.Approve == nil:
		writeJSON(w, http.StatusBadRequest, errBody("bad_request", `want {"approve": true|false, "remember": ""|"session"|"always"}`))
		return
	case !*body.Approve && body.Remember != "":
		writeJSON(w, http.StatusBadRequest, errBody("bad_request", "remember applies to an approval only"))
		return
	case *body.Approve && body.Remember == "":
		answer = policy.ApprovedOnce
	case *body.Approve && body.Remember == "session":
		answer = policy.ApprovedForSession
	case *body.Approve && body.Remember == "always":
		answer = policy.ApprovedAlways
	case *body.Approve:
		writeJSON(w, http.StatusBadRequest, errBody("bad_request", `remember: want "session" or "always"`))
		return
	}
	id := r.PathValue("id")
	notFound := func() {
		writeJSON(w, http.StatusNotFound, errBody("unknown_approval", "no pending call "+strconv.Quote(id)+" (answered, timed out or cancelled)"))
	}
	if c.opts.Approvals == nil {
		notFound()
		return
	}
	a, ok, err := c.opts.Approvals.Get(r.Context(), id)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, errBody("unavailable", "cannot read the pending approval: "+err.Error()))
		return
	}
	if !ok {
		notFound()
		return
	}
	// A person approves only what they could call themselves: the gate's
	// Approve, on the waiting call's tool, decided here on the replica the
	// person uses, whichever replica holds the call.
	d := c.rt.Gate().Decide(callerOf(r.Context()).policyCaller(), policy.Approve, policy.Target{Provider: a.Provider, Canonical: a.Tool})
	if d.Verdict != policy.Allow {
		writeJSON(w, http.StatusForbidden, errBody("forbidden", d.Err.Message+". "+d.Err.Hint))
		return
	}
	if ok, err := c.opts.Approvals.Answer(r.Context(), id, answer); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, errBody("unavailable", "cannot record the answer: "+err.Error()))
		return
	} else if !ok {
		notFound()
		return
	}
	c.log.Info("console answered an approval", "user", callerOf(r.Context()).user, "id", id, "approve", *body.Approve, "remember", body.Remember, "replica", a.Replica)
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "approve": *body.Approve, "remember": body.Remember})
}

func (c *Console) approvalsPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, http.StatusOK, "approvals", c.view(r, "Approvals", "approvals", map[string]any{"Enabled": c.opts.Approvals != nil}))
}

// shortSession keeps a session id's first 8 characters, as the transport's
// logs do: with the id, a caller could use the session.
func shortSession(id string) string {
	if r := []rune(id); len(r) > 8 {
		return string(r[:8]) + "…"
	}
	return id
}
