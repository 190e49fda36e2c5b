// Package storetest is the conformance suite every store.Store
// implementation runs: the same tests, against the real database.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Harness{
//			New: func(t testing.TB) store.Store { ... a fresh, empty store ... },
//		})
//	}
package storetest
