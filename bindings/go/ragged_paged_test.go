package cudnnfe

import (
	"math"
	"math/rand"
	"testing"
)

// Ragged (packed, "THD") and paged K/V attention on the CPU reference,
// through the idiomatic options (AttentionOptions.RaggedOffset*,
// SDPAOptions.PageTable*, MaxSeqLenKV): the same numbers as the padded
// dense attention (attentionRef), as tests/test_cpu_attention_ragged.cpp
// checks in C.

// packTHD lays out the valid rows of a dense [b, h, s, w] tensor packed by
// sequence (token-major, then head): it returns the buffer (nominal size
// b*s*h*w, the tail NaN) and the element offset of each sequence (b+1).
func packTHD(dense []float32, b, h, s, w int, lens []int32) ([]float32, []int32) {
	buf := nans(b * s * h * w)
	offsets := make([]int32, b+1)
	at := 0
	for n := 0; n < b; n++ {
		offsets[n] = int32(at)
		for i := 0; i < int(lens[n]); i++ {
			for hh := 0; hh < h; hh++ {
				copy(buf[at+(i*h+hh)*w:at+(i*h+hh+1)*w], dense[((n*h+hh)*s+i)*w:((n*h+hh)*s+i+1)*w])
			}
		}
		at += int(lens[n]) * h * w
	}
	offsets[b] = int32(at)
	return buf, offsets
}

func thdStrides(h, s, w int) []int64 { return []int64{int64(s * h * w), int64(w), int64(h * w), 1} }

func TestRaggedAttentionMatchesPadded(t *testing.T) { testRaggedAttention(t, false) }

// SetRaggedOffset gives o its offsets after SDPA returned it, as
// cudnn-frontend's set_ragged_offset does: the same numbers.
func TestSetRaggedOffsetAfterTheAttentionMatchesPadded(t *testing.T) { testRaggedAttention(t, true) }

func TestSetRaggedOffsetRefusesATensorNoAttentionUses(t *testing.T) {
	g := newGraph(t)
	x := must1[Tensor](t)(g.AddTensor("lonely", DTypeFloat, []int64{2, 1, 3, 4}, nil))
	off := must1[Tensor](t)(g.AddTensor("offsets", DTypeInt32, []int64{3, 1, 1, 1}, nil))
	wantErr(t, g.SetRaggedOffset(x, off), ErrInvalidArgument)
}

func testRaggedAttention(t *testing.T, setOLater bool) {
	const b, hq, hkv, sq, skv, d = 2, 2, 1, 4, 5, 4
	lensQ, lensKV := []int32{3, 4}, []int32{5, 2}
	rng := rand.New(rand.NewSource(41))
	qd := randFloats(rng, b*hq*sq*d, 1)
	kd, vd := randFloats(rng, b*hkv*skv*d, 1), randFloats(rng, b*hkv*skv*d, 1)
	qp, offQ := packTHD(qd, b, hq, sq, d, lensQ)
	kp, offKV := packTHD(kd, b, hkv, skv, d, lensKV)
	vp, _ := packTHD(vd, b, hkv, skv, d, lensKV)

	g := newGraph(t)
	add := func(name string, dt DType, dims, strides []int64) Tensor {
		return must1[Tensor](t)(g.AddTensor(name, dt, dims, strides))
	}
	q := add("q", DTypeFloat, []int64{b, hq, sq, d}, thdStrides(hq, sq, d))
	k := add("k", DTypeFloat, []int64{b, hkv, skv, d}, thdStrides(hkv, skv, d))
	v := add("v", DTypeFloat, []int64{b, hkv, skv, d}, thdStrides(hkv, skv, d))
	lq := add("seq_len_q", DTypeInt32, []int64{b, 1, 1, 1}, nil)
	lkv := add("seq_len_kv", DTypeInt32, []int64{b, 1, 1, 1}, nil)
	rq := add("ragged_q", DTypeInt32, []int64{b + 1, 1, 1, 1}, nil)
	rkv := add("ragged_kv", DTypeInt32, []int64{b + 1, 1, 1, 1}, nil)
	opts := DefaultSDPAOptions()
	opts.PaddingMask, opts.SeqLenQ, opts.SeqLenKV = true, lq, lkv
	opts.RaggedOffsetQ, opts.RaggedOffsetK, opts.RaggedOffsetV, opts.RaggedOffsetO = rq, rkv, rkv, rq
	if setOLater {
		opts.RaggedOffsetO = 0
	}
	o, _, err := g.SDPA(q, k, v, &opts)
	must(t, err)
	if setOLater {
		must(t, g.SetRaggedOffset(o, rq))
	}
	must(t, g.SetOutput(o, true))
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	got := nans(b * sq * hq * d)
	must(t, g.ExecuteHost(h, Host(q, qp), Host(k, kp), Host(v, vp), Host(lq, lensQ), Host(lkv, lensKV),
		Host(rq, offQ), Host(rkv, offKV), Host(o, got)))

	wo, _ := attentionRef(qd, kd, vd, b, hq, hkv, sq, skv, d, 1/math.Sqrt(d),
		attnMasks{seqQ: lensQ, seqKV: lensKV, left: -1, right: -1})
	want, _ := packTHD(f32s(wo), b, hq, sq, d, lensQ)
	// The valid rows match; nothing past the packed rows is written.
	closeInf(t, "ragged o", got[:offQ[b]], want[:offQ[b]], 1e-5)
	for i := int(offQ[b]); i < len(got); i++ {
		if !math.IsNaN(float64(got[i])) {
			t.Fatalf("o[%d] = %v was written; only the %d packed elements may be", i, got[i], offQ[b])
		}
	}
}

func TestPagedAttentionMatchesContiguous(t *testing.T) {
	const b, hq, hkv, sq, d, pageSize, pages = 2, 2, 1, 3, 4, 2, 3
	const skv, numPages = pageSize * pages, b*pages + 1
	lensQ, lensKV := []int32{3, 2}, []int32{5, 6}
	// Batch n's slot p lives in page table[n][p], scrambled; page 3 unused.
	table := []int32{4, 0, 6, 2, 5, 1}
	rng := rand.New(rand.NewSource(43))
	qd := randFloats(rng, b*hq*sq*d, 1)
	kd, vd := randFloats(rng, b*hkv*skv*d, 1), randFloats(rng, b*hkv*skv*d, 1)
	toPages := func(dense []float32) []float32 {
		out := randFloats(rng, numPages*hkv*pageSize*d, 100) // unread pages hold junk
		for n := 0; n < b; n++ {
			for hh := 0; hh < hkv; hh++ {
				for j := 0; j < skv; j++ {
					page, row := int(table[n*pages+j/pageSize]), j%pageSize
					dst := ((page*hkv+hh)*pageSize + row) * d
					copy(out[dst:dst+d], dense[((n*hkv+hh)*skv+j)*d:((n*hkv+hh)*skv+j+1)*d])
				}
			}
		}
		return out
	}

	g := newGraph(t)
	add := func(name string, dt DType, dims ...int64) Tensor {
		return must1[Tensor](t)(g.AddTensor(name, dt, dims, nil))
	}
	q := add("q", DTypeFloat, b, hq, sq, d)
	k := add("k_pages", DTypeFloat, numPages, hkv, pageSize, d)
	v := add("v_pages", DTypeFloat, numPages, hkv, pageSize, d)
	lq := add("seq_len_q", DTypeInt32, b, 1, 1, 1)
	lkv := add("seq_len_kv", DTypeInt32, b, 1, 1, 1)
	tk := add("page_table_k", DTypeInt32, b, 1, pages, 1)
	tv := add("page_table_v", DTypeInt32, b, 1, pages, 1)
	opts := &SDPAOptions{AttentionOptions: AttentionOptions{PaddingMask: true, SeqLenQ: lq, SeqLenKV: lkv},
		PageTableK: tk, PageTableV: tv, MaxSeqLenKV: skv}
	o, _, err := g.SDPA(q, k, v, opts)
	must(t, err)
	must(t, g.SetOutput(o, true))
	if got := dims(g, t, o); got[2] != sq || got[3] != d {
		t.Fatalf("o dims %v; want [%d %d %d %d]", got, b, hq, sq, d)
	}
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	got := nans(b * hq * sq * d)
	must(t, g.ExecuteHost(h, Host(q, qd), Host(k, toPages(kd)), Host(v, toPages(vd)), Host(lq, lensQ),
		Host(lkv, lensKV), Host(tk, table), Host(tv, table), Host(o, got)))
	wo, _ := attentionRef(qd, kd, vd, b, hq, hkv, sq, skv, d, 1/math.Sqrt(d),
		attnMasks{seqQ: lensQ, seqKV: lensKV, left: -1, right: -1})
	closeInf(t, "paged o", got, f32s(wo), 1e-5)
}

func TestRaggedAndPagedOptionDefaults(t *testing.T) {
	s := DefaultSDPAOptions()
	if s.RaggedOffsetQ != 0 || s.RaggedOffsetO != 0 || s.PageTableK != 0 || s.PageTableV != 0 || s.MaxSeqLenKV != 0 {
		t.Fatalf("ragged / paged defaults are not 0: %+v", s)
	}
	if b := DefaultSDPABackwardOptions(); b.RaggedOffsetK != 0 || b.RaggedOffsetV != 0 {
		t.Fatalf("backward ragged defaults are not 0: %+v", b)
	}
}

// PagedCacheLoad on the CPU reference: rows j < seqLen[n] come from page
// table[n][j / pageSize], the rest are 0; a malformed page table is refused
// naming the port.
func TestPagedCacheLoadGathersPages(t *testing.T) {
	const b, h, pageSize, pages, d, numPages = 2, 2, 2, 3, 3, 7
	const s = pages * pageSize
	lens := []int32{5, 2}
	table := []int32{4, 0, 6, 2, 5, 1}
	rng := rand.New(rand.NewSource(47))
	cache := randFloats(rng, numPages*h*pageSize*d, 1)

	g := newGraph(t)
	add := func(name string, dt DType, dims ...int64) Tensor {
		return must1[Tensor](t)(g.AddTensor(name, dt, dims, nil))
	}
	c := add("cache", DTypeFloat, numPages, h, pageSize, d)
	l := add("lengths", DTypeInt32, b, 1, 1, 1)
	tb := add("table", DTypeInt32, b, 1, pages, 1)
	opts := DefaultPagedCacheLoadOptions()
	opts.Name = "load"
	y := must1[Tensor](t)(g.PagedCacheLoad(c, l, tb, &opts))
	must(t, g.SetOutput(y, true))
	hd := newHandle(t)
	must(t, g.Build(hd, cpuBuild))
	got := nans(b * h * s * d)
	must(t, g.ExecuteHost(hd, Host(c, cache), Host(l, lens), Host(tb, table), Host(y, got)))
	for n := 0; n < b; n++ {
		for hh := 0; hh < h; hh++ {
			for j := 0; j < s; j++ {
				for x := 0; x < d; x++ {
					want := float32(0)
					if j < int(lens[n]) {
						page := int(table[n*pages+j/pageSize])
						want = cache[((page*h+hh)*pageSize+j%pageSize)*d+x]
					}
					if v := got[((n*h+hh)*s+j)*d+x]; v != want {
						t.Fatalf("y[%d,%d,%d,%d] = %v, want %v", n, hh, j, x, v, want)
					}
				}
			}
		}
	}

	bad := newGraph(t)
	bc := must1[Tensor](t)(bad.AddTensor("cache", DTypeFloat, []int64{7, 2, 2, 3}, nil))
	bl := must1[Tensor](t)(bad.AddTensor("lengths", DTypeInt32, []int64{2, 1, 1, 1}, nil))
	bt := must1[Tensor](t)(bad.AddTensor("wide", DTypeInt32, []int64{2, 1, 3, 2}, nil))
	_, err := bad.PagedCacheLoad(bc, bl, bt, &opts)
	wantErr(t, err, ErrInvalidGraph, `paged_cache_load "load"`, `page_table "wide"`)
}
