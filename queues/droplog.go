package queues

// DropLog keeps a copy of every record a consumer drops, for a worker that
// must account for each packet (the reordering counter takes a dropped
// packet as finished). A consumer given one (LogDrops) appends to Recs;
// the worker reads and truncates it after each Enqueue and Dequeue, so that
// it grows to the most one call drops and then allocates no more.
type DropLog struct{ Recs []Record }

// DropLogger is a consumer that can keep a DropLog: fifo, fq and fq_codel.
type DropLogger interface {
	// LogDrops makes the consumer append each record it drops to l; nil
	// stops it.
	LogDrops(l *DropLog)
}

func (l *DropLog) add(r *Record) {
	if l != nil {
		l.Recs = append(l.Recs, *r)
	}
}

func (l *DropLog) addAll(recs []Record) {
	if l != nil {
		l.Recs = append(l.Recs, recs...)
	}
}

// LogDrops implements DropLogger.
func (q *FIFO) LogDrops(l *DropLog) { q.drops = l }

// LogDrops implements DropLogger.
func (q *FQ) LogDrops(l *DropLog) { q.drops = l }

// LogDrops implements DropLogger.
func (q *FQCodel) LogDrops(l *DropLog) { q.drops = l }
