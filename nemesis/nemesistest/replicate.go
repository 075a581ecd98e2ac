package nemesistest

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
)

// copyData makes dst hold exactly src's keys, values and TTLs: a full
// resynchronisation. Strings and hashes, what locks store, are copied.
func copyData(src, dst *miniredis.Miniredis) error {
	dst.FlushAll()
	for _, k := range src.Keys() {
		switch typ := src.Type(k); typ {
		case "string":
			v, err := src.Get(k)
			if err != nil {
				continue // expired meanwhile
			}
			if err := dst.Set(k, v); err != nil {
				return err
			}
		case "hash":
			fs, err := src.HKeys(k)
			if err != nil {
				continue
			}
			for _, f := range fs {
				dst.HSet(k, f, src.HGet(k, f))
			}
		case "none":
			continue
		default:
			return fmt.Errorf("key %s: cannot replicate a %s", k, typ)
		}
		if ttl := src.TTL(k); ttl > 0 {
			dst.SetTTL(k, ttl)
		}
	}
	return nil
}
