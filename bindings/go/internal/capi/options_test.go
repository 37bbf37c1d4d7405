package capi

import (
	"reflect"
	"testing"
)

// fillDistinct sets every numeric field (and array element) of the struct
// v points to a value of its own, so that a swapped or dropped field shows.
func fillDistinct(v reflect.Value, next *int) {
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Struct:
			fillDistinct(f, next)
		case reflect.Array:
			for j := 0; j < f.Len(); j++ {
				setNumber(f.Index(j), next)
			}
		case reflect.String:
			f.SetString("node")
		default:
			setNumber(f, next)
		}
	}
}

func setNumber(f reflect.Value, next *int) {
	*next++
	switch f.Kind() {
	case reflect.Float32, reflect.Float64:
		f.SetFloat(float64(*next) + 0.25)
	case reflect.Uint32, reflect.Uint64:
		f.SetUint(uint64(*next))
	default:
		f.SetInt(int64(*next))
	}
}

// TestOptionsRoundTrip: every field of every generated options mirror
// reaches the C struct and comes back (toC, then fromC), for each struct of
// OptionStructs.
func TestOptionsRoundTrip(t *testing.T) {
	if len(optionMirrors) != len(OptionStructs) {
		t.Fatalf("%d mirrors for %d options structs", len(optionMirrors), len(OptionStructs))
	}
	for _, m := range optionMirrors {
		next := 0
		fillDistinct(reflect.ValueOf(m).Elem(), &next)
		want := reflect.ValueOf(m).Elem().Interface()
		if got := m.roundTrip(); !reflect.DeepEqual(got, want) {
			t.Errorf("%T changed through C:\n got %+v\nwant %+v", m, got, want)
		}
	}
}
