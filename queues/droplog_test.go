package queues

import "testing"

// TestDropLogEveryDrop: every consumer logs exactly the records it counts
// as dropped, overlimit at enqueue and CoDel's at dequeue alike.
func TestDropLogEveryDrop(t *testing.T) {
	for _, name := range ConsumerNames {
		t.Run(name, func(t *testing.T) {
			mk, err := ConsumerConfig{Limit: 64}.New(name)
			if err != nil {
				t.Fatal(err)
			}
			c := mk()
			var log DropLog
			c.(DropLogger).LogDrops(&log)
			recs := make([]Record, 32)
			out := make([]Record, 0, 8)
			for step := range 400 {
				for i := range recs {
					recs[i] = Record{Hash: uint32(i % 4), Len: 1000, Arrival: int64(step) * 1e6}
				}
				now := int64(step) * 1e6
				c.Enqueue(recs, now)
				out = c.Dequeue(now, Budget{Packets: 8}, out[:0])
			}
			var drops uint64
			for _, n := range c.Stats().Drops {
				drops += n
			}
			if drops == 0 || uint64(len(log.Recs)) != drops {
				t.Errorf("logged %d records, counted %d drops (want equal, above 0): %+v", len(log.Recs), drops, c.Stats().Drops)
			}
		})
	}
}
