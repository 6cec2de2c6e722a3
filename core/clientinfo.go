package core

import (
	"maps"
	"sync"
	"sync/atomic"
)

// maxClientInfos bounds the clientInfo values clientInfoOf remembers, and maxClientInfoBytes the
// size of one: a client sends the same one with every 2026-07-28 request, and a server sees a
// handful of different ones.
const (
	maxClientInfos     = 64
	maxClientInfoBytes = 512
)

// clientInfos maps the raw JSON of a clientInfo already decoded to its value, copied on write:
// a request reads it with one atomic load and takes no lock.
var (
	clientInfos   atomic.Pointer[map[string]Implementation]
	clientInfosMu sync.Mutex // serializes the writers
)

// clientInfoOf decodes the _meta clientInfo of a request (a JSON object, as the decoder read it)
// into dst (zero, as every call's storage is), or a new Implementation when dst is nil, as
// unmarshal does; a value seen before is copied from the one it decoded then, instead of decoded
// again. Only values without icons are remembered, so that the copy shares nothing a handler
// could modify.
//
// The first maxClientInfos values win: a client sending endless distinct values fills the set
// once and then only decodes its own, as every value was decoded before; a full set is seen on
// the atomic load, so that such a client's requests take no lock either.
func clientInfoOf(raw []byte, dst *Implementation) (*Implementation, error) {
	impl := dst
	if impl == nil {
		impl = new(Implementation)
	}
	full := false
	if m := clientInfos.Load(); m != nil {
		if known, ok := (*m)[string(raw)]; ok {
			*impl = known
			return impl, nil
		}
		full = len(*m) >= maxClientInfos
	}
	if err := unmarshal(raw, impl); err != nil {
		return nil, err
	}
	if !full && impl.Icons == nil && len(raw) <= maxClientInfoBytes {
		rememberClientInfo(string(raw), *impl)
	}
	return impl, nil
}

// rememberClientInfo adds one decoded clientInfo to clientInfos, unless it is full.
func rememberClientInfo(raw string, impl Implementation) {
	clientInfosMu.Lock()
	defer clientInfosMu.Unlock()
	old := clientInfos.Load()
	var next map[string]Implementation
	if old != nil {
		if _, ok := (*old)[raw]; ok || len(*old) >= maxClientInfos {
			return
		}
		next = maps.Clone(*old)
	} else {
		next = make(map[string]Implementation, 1)
	}
	next[raw] = impl
	clientInfos.Store(&next)
}
