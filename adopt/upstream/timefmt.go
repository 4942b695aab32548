package upstream

import (
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Placement stores naive UTC timestamps: SQLAlchemy writes them to SQLite
// as text with microseconds; MySQL's DATETIME columns hold whole seconds.
const (
	sqliteTimeLayout = "2006-01-02 15:04:05.000000"
	mysqlTimeLayout  = "2006-01-02 15:04:05"
)

// parseTime reads a stored timestamp; NULL is the zero time.
func parseTime(s sql.NullString) (time.Time, error) {
	if !s.Valid || s.String == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s.String); err == nil {
		return t.UTC(), nil // a driver that parsed the DATETIME itself
	}
	v := strings.Replace(s.String, "T", " ", 1)
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", mysqlTimeLayout} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %q: want YYYY-MM-DD HH:MM:SS[.ffffff]", s.String)
}

// formatTime writes a timestamp as Placement would; the zero time is
// NULL.
func formatTime(d Dialect, t time.Time) any {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	if d == MySQL {
		return t.Format(mysqlTimeLayout)
	}
	return t.Format(sqliteTimeLayout)
}
