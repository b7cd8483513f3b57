/* The exact pass's inner products over rows stored by columns, without packing the table.
 *
 * out[q, r] = scale[r] * sum_k directions[q, k] * columns[k * stride + r]: the table's one copy,
 * stored by columns (tables/layout.py), read in place. BLAS's sgemm copies ("packs") the whole
 * table into its own panels on every call; at the batch sizes a server forms (9-16 directions
 * at 32 connections) that copy costs about as much as the products themselves. Here, each tile
 * of 16 rows is read straight from the columns, with the next tiles prefetched, and multiplied
 * into a block of accumulators held in registers (from 8 directions, up to 16 at once); below
 * that, strips of 8 columns are read forward over every row. AVX-512 only: without it BLAS
 * answers (docs/exact-pass.md: AVX2's tiles measured 0.77x BLAS over HTTP).
 *
 * Every score is one float32 FMA chain over k = 0..width-1 in order, then one multiplication by
 * the row's scale: the same bits whatever the batch or the tile, and within the bound
 * products.py's float32_dot_error gives (a float32 dot product in any order).
 *
 * After the pass, the two steps that follow it: the candidates of each direction
 * (dots_candidates; selection.py's in numpy) and the rescoring's float64 sums in numpy's order
 * (dots_rescore, below; rescoring.py's in numpy).
 *
 * Loaded with ctypes (dots.py): no Python API here. A CPU without AVX-512F gets 0 from
 * dots_simd and the service keeps BLAS and numpy for all three.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* x86-64 only: elsewhere (aarch64, ...) the library builds with nothing in it but dots_simd,
 * which returns 0, and the pass stays with BLAS. */
#if defined(__x86_64__)
#include <immintrin.h>

/* How far ahead (in floats along a column) each column's next tiles are prefetched: two tiles
 * of 32 rows. Measured on the default table, one thread, batches of 1-64: 64 floats ahead gave
 * 1.0-1.3x the q/s of 32, 128, 256 or 512, and 1.4-2.9x no prefetch at all. */
#define AHEAD 64

/* AVX-512's tile (up to 16 directions x 16 rows) from this many directions on; below it the
 * strips. One thread, the default table, throwaway timing of the same calls (us a direction,
 * against the earlier tiles of 8 directions x 32 rows, or the strips at 8): 7
 * directions 0.98-1.04x the strips (5 and 6 0.70-0.89x), 8 1.04-1.37x, 9 1.28-1.36x, 12
 * 1.17-1.25x, 16 1.07-1.11x, 24 1.07x, 32 1.02-1.03x. A tile of 24 directions (24
 * accumulators) ran at 0.36-0.51x. */
#define WIDE_FROM 8
/* The most directions one tile holds: 16 accumulators of 16 rows. */
#define TILE_DIRECTIONS 16

#define AVX512 __attribute__((target("avx512f")))
#define AVX2 __attribute__((target("avx2,fma")))
#define INLINE inline __attribute__((always_inline))

/* Up to 16 directions x 16 rows: each column's 16 rows loaded once (one cache line) and
 * multiplied into every direction's accumulator. */
static INLINE AVX512 void tile512(const float *directions, int64_t width, int queries,
                                  const float *columns, int64_t stride, const float *scales,
                                  float *out, int64_t rows, __mmask16 mask)
{
    __m512 acc[TILE_DIRECTIONS];
    for (int q = 0; q < TILE_DIRECTIONS; q++)
        acc[q] = _mm512_setzero_ps();
    for (int64_t k = 0; k < width; k++) {
        const float *column = columns + k * stride;
        __m512 a = _mm512_maskz_loadu_ps(mask, column);
        _mm_prefetch((const char *)(column + AHEAD), _MM_HINT_T0);
        for (int q = 0; q < TILE_DIRECTIONS; q++)
            if (q < queries)
                acc[q] = _mm512_fmadd_ps(_mm512_set1_ps(directions[q * width + k]), a, acc[q]);
    }
    __m512 s = scales ? _mm512_maskz_loadu_ps(mask, scales) : _mm512_set1_ps(1.0f);
    for (int q = 0; q < TILE_DIRECTIONS; q++)
        if (q < queries)
            _mm512_mask_storeu_ps(out + q * rows, mask, _mm512_mul_ps(acc[q], s));
}

/* The directions in groups of at most TILE_DIRECTIONS, as even as they go (17 is 9 + 8, not
 * 16 + 1: a tile of one direction is a single chain of FMAs, bound by their latency). */
static AVX512 void dots512(const float *directions, int64_t count, int64_t width,
                           const float *columns, int64_t stride, int64_t rows,
                           const float *scales, float *out)
{
    int64_t groups = (count + TILE_DIRECTIONS - 1) / TILE_DIRECTIONS;
    int64_t size = (count + groups - 1) / groups;
    for (int64_t r0 = 0; r0 < rows; r0 += 16) {
        int64_t left = rows - r0;
        __mmask16 mask = left >= 16 ? 0xFFFF : (__mmask16)((1u << left) - 1);
        for (int64_t q0 = 0; q0 < count; q0 += size) {
            int queries = (int)(count - q0 < size ? count - q0 : size);
            tile512(directions + q0 * width, width, queries, columns + r0, stride,
                    scales ? scales + r0 : NULL, out + q0 * rows + r0, rows, mask);
        }
    }
}

/* Up to STRIPS directions: the whole run of rows at once, 8 columns at a time. Each block of 16
 * rows carries its accumulators through 8 columns and back to `out`, so the table is read
 * once, in 8 streams running forward, and each score is the same FMA chain as in a tile (k in
 * order from 0, then the scale): the same bits. A tile's 384 streams, one per column, read the
 * table at well below the machine's bandwidth when there are too few directions to keep the
 * FMAs busy; these runs read it near that bandwidth (one thread, the default table: 1 direction
 * 750-843 q/s against 294-375 by tiles and 596-680 by BLAS's matrix-vector product; 4: 2,155
 * against 942-1,148; 8: 2,398 against 1,914; 10: 2,182 against 3,020 by tiles). */
#define STRIPS 8
#define GROUP 8

static INLINE AVX512 void strips512_n(const float *directions, int64_t width, int queries,
                                      const float *columns, int64_t stride, int64_t rows,
                                      const float *scales, float *out)
{
    for (int64_t k0 = 0; k0 < width; k0 += GROUP) {
        int group = width - k0 < GROUP ? (int)(width - k0) : GROUP;
        int last = k0 + GROUP >= width;
        const float *column = columns + k0 * stride;
        for (int64_t i = 0; i < rows; i += 16) {
            __mmask16 m = rows - i >= 16 ? 0xFFFF : (__mmask16)((1u << (rows - i)) - 1);
            __m512 acc[STRIPS];
            for (int q = 0; q < STRIPS; q++)
                if (q < queries)
                    acc[q] = k0 ? _mm512_maskz_loadu_ps(m, out + q * rows + i) : _mm512_setzero_ps();
            for (int j = 0; j < GROUP; j++) {
                if (j < group) {
                    __m512 a = _mm512_maskz_loadu_ps(m, column + j * stride + i);
                    for (int q = 0; q < STRIPS; q++)
                        if (q < queries)
                            acc[q] = _mm512_fmadd_ps(
                                _mm512_set1_ps(directions[q * width + k0 + j]), a, acc[q]);
                }
            }
            __m512 s = last && scales ? _mm512_maskz_loadu_ps(m, scales + i) : _mm512_set1_ps(1.0f);
            for (int q = 0; q < STRIPS; q++)
                if (q < queries)
                    _mm512_mask_storeu_ps(out + q * rows + i, m,
                                          last && scales ? _mm512_mul_ps(acc[q], s) : acc[q]);
        }
    }
}

#define STRIPS_CASE(F, N)                                                                   \
    case N: F(directions, width, N, columns, stride, rows, scales, out); break

static AVX512 void strips512(const float *directions, int64_t count, int64_t width,
                             const float *columns, int64_t stride, int64_t rows,
                             const float *scales, float *out)
{
    switch (count) {
        STRIPS_CASE(strips512_n, 1); STRIPS_CASE(strips512_n, 2); STRIPS_CASE(strips512_n, 3);
        STRIPS_CASE(strips512_n, 4); STRIPS_CASE(strips512_n, 5); STRIPS_CASE(strips512_n, 6);
        STRIPS_CASE(strips512_n, 7); /* 8 and more: dots512 */
    default: break;
    }
}


/* The candidates of a pass: per row q of `scores` (count x n, C order), every column whose score
 * is at least the row's depth-th best minus slack[q] (compared in float64, as numpy compares a
 * float32 score with a float64 bound), in ascending order. The depth-th best comes from one
 * forward read of the row keeping its `depth` best in a heap; blocks of 32 scores none of which
 * beats the heap's least are passed over with four AVX2 compares. selection.py's candidate_rows
 * does the same in numpy (a bound from the best of each block of columns, a little lower, so a
 * few more candidates); the rescoring then gives the same answer from either. */

#define BLOCK 32

/* The largest of 32 scores, in each of 8 lanes. */
static INLINE AVX2 __m256 block_max(const float *s)
{
    return _mm256_max_ps(_mm256_max_ps(_mm256_loadu_ps(s), _mm256_loadu_ps(s + 8)),
                         _mm256_max_ps(_mm256_loadu_ps(s + 16), _mm256_loadu_ps(s + 24)));
}

/* `value` placed at `i` of a min-heap of `size` floats, sifted down (at 0: the least replaced). */
static INLINE void sift_down(float *heap, int64_t size, int64_t i, float value)
{
    for (;;) {
        int64_t child = 2 * i + 1;
        if (child >= size)
            break;
        if (child + 1 < size && heap[child + 1] < heap[child])
            child++;
        if (!(heap[child] < value))
            break;
        heap[i] = heap[child];
        i = child;
    }
    heap[i] = value;
}

/* s[from..to) offered to the min-heap of the `depth` best. */
static INLINE void offer(float *heap, int64_t depth, const float *s, int64_t from, int64_t to)
{
    for (int64_t j = from; j < to; j++)
        if (s[j] > heap[0])
            sift_down(heap, depth, 0, s[j]);
}

/* The depth-th best of s[0..n) (depth <= n), the heap's room given. */
static AVX2 float depth_th(const float *s, int64_t n, int64_t depth, float *heap)
{
    for (int64_t i = 0; i < depth; i++)
        heap[i] = s[i];
    for (int64_t i = depth / 2 - 1; i >= 0; i--)
        sift_down(heap, depth, i, heap[i]);
    int64_t j = depth;
    for (; j + BLOCK <= n; j += BLOCK)
        if (_mm256_movemask_ps(_mm256_cmp_ps(block_max(s + j), _mm256_set1_ps(heap[0]),
                                             _CMP_GT_OQ)))
            offer(heap, depth, s, j, j + BLOCK);
    offer(heap, depth, s, j, n);
    return heap[0];
}

/* The least float32 x with (double)x >= bound (-inf for a bound of -inf). */
static float float_at_least(double bound)
{
    float x = (float)bound;
    if ((double)x < bound)
        x = __builtin_nextafterf(x, __builtin_inff());
    return x;
}

/* The columns of s[from..to) at least `bar`, appended to found[0..kept); the new count, or -1
 * when they outgrow `capacity`. */
static INLINE int64_t collect(const float *s, int64_t from, int64_t to, float bar,
                              int64_t capacity, int64_t *found, int64_t kept)
{
    for (int64_t j = from; j < to; j++)
        if (s[j] >= bar) {
            if (kept == capacity)
                return -1;
            found[kept++] = j;
        }
    return kept;
}

static AVX2 int64_t at_least(const float *s, int64_t n, float bar, int64_t capacity,
                             int64_t *found)
{
    int64_t kept = 0, j = 0;
    __m256 wide = _mm256_set1_ps(bar);
    for (; j + BLOCK <= n && kept >= 0; j += BLOCK)
        if (_mm256_movemask_ps(_mm256_cmp_ps(block_max(s + j), wide, _CMP_GE_OQ)))
            kept = collect(s, j, j + BLOCK, bar, capacity, found, kept);
    return kept < 0 ? kept : collect(s, j, n, bar, capacity, found, kept);
}

static AVX2 int candidates256(const float *scores, int64_t count, int64_t n, int64_t depth,
                              const double *slack, int64_t capacity, int64_t *found,
                              int64_t *counts, float *heap)
{
    for (int64_t q = 0; q < count; q++) {
        const float *s = scores + q * n;
        double bound = (double)depth_th(s, n, depth, heap) - slack[q];
        int64_t kept = at_least(s, n, float_at_least(bound), capacity, found + q * capacity);
        if (kept < 0)
            return -1;
        counts[q] = kept;
    }
    return 0;
}

#endif /* __x86_64__ */

/* 512 where this CPU runs AVX-512F (and so AVX2, which the selection uses), else 0 (the caller
 * keeps BLAS and numpy). */
int dots_simd(void)
{
#if !defined(__x86_64__)
    return 0;
#else
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? 512 : 0;
#endif
}

/* out (count x rows, C order) = directions (count x width, C order) times the first `rows`
 * rows of a table stored by columns (column k at columns + k * stride), each product times
 * scales[r] when scales is not NULL. `simd` is what dots_simd returned. Returns the
 * instruction set used: 512, or 0 (nothing computed). */
int dots_by_columns(int simd, const float *directions, int64_t count, int64_t width,
                    const float *columns, int64_t stride, int64_t rows, const float *scales,
                    float *out)
{
#if !defined(__x86_64__)
    (void)simd, (void)directions, (void)count, (void)width, (void)columns, (void)stride;
    (void)rows, (void)scales, (void)out;
    return 0;
#else
    if (simd >= 512) {
        if (count >= WIDE_FROM)
            dots512(directions, count, width, columns, stride, rows, scales, out);
        else
            strips512(directions, count, width, columns, stride, rows, scales, out);
        return 512;
    }
    return 0;
#endif
}

/* Candidates of a pass (see candidates256): row q's columns in found[q * capacity ..], counts[q]
 * of them. Returns 0; -1 when a row has more than `capacity` (then found and counts are not
 * whole), -2 when not run here (no AVX-512, or depth outside 1..n, or beyond MOST_DEPTH): the
 * caller selects in numpy. */
#define MOST_DEPTH 4096
int dots_candidates(const float *scores, int64_t count, int64_t n, int64_t depth,
                    const double *slack, int64_t capacity, int64_t *found, int64_t *counts)
{
#if !defined(__x86_64__)
    (void)scores, (void)count, (void)n, (void)depth, (void)slack, (void)capacity;
    (void)found, (void)counts;
    return -2;
#else
    float heap[MOST_DEPTH];
    if (depth < 1 || depth > n || depth > MOST_DEPTH || dots_simd() < 512)
        return -2;
    return candidates256(scores, count, n, depth, slack, capacity, found, counts, heap);
#endif
}

/* numpy's pairwise sum of a[0..n) (np.add.reduce along a contiguous axis): below 8 terms one
 * by one, up to 128 in 8 interleaved sums, above that the two halves (a multiple of 8 first),
 * so a score summed here has numpy's bits (added to numpy's initial +0, as a reduction is). */
static double pairwise_sum(const double *a, int64_t n)
{
    if (n < 8) {
        double res = 0.;
        for (int64_t i = 0; i < n; i++)
            res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        int64_t i;
        for (int t = 0; t < 8; t++)
            r[t] = a[t];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int t = 0; t < 8; t++)
                r[t] += a[i + t];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        return res;
    }
    int64_t half = n / 2;
    half -= half % 8;
    return pairwise_sum(a, half) + pairwise_sum(a + half, n - half);
}

/* The rescoring's float64 dot products: sums[i] = the sum over c of
 * (double)rows[ids[i] * row_step + c * column_step] * directions[owner[i] * width + c], each
 * product rounded to float64 and the products summed as numpy sums a row (pairwise_sum): the
 * bits of rescoring.py's numpy rescoring. Rows are read RESCORED at a time, column by column (in
 * a table stored by columns each row is `width` places apart; ids in ascending order then read
 * each column forward). Returns 0, or -1 when out of memory. */
#define RESCORED 32
/* Columns ahead each candidate's entry is prefetched. Measured on the default table, one thread,
 * batches of 16 queries' candidates (10 each) rescored after a pass: 26 us a query at 8 ahead
 * against 37 without prefetching; 16-160 candidates at a time and 4-16 ahead within 10%. */
#define RESCORE_AHEAD 8
int dots_rescore(const float *rows, int64_t row_step, int64_t column_step, int64_t width,
                 const int64_t *ids, const int64_t *owner, int64_t n, const double *directions,
                 double *sums)
{
    double *products = malloc(sizeof(double) * RESCORED * (size_t)(width ? width : 1));
    if (!products)
        return -1;
    for (int64_t i0 = 0; i0 < n; i0 += RESCORED) {
        int64_t block = n - i0 < RESCORED ? n - i0 : RESCORED;
        for (int64_t c = 0; c < width; c++)
            for (int64_t b = 0; b < block; b++) {
                int64_t i = i0 + b;
                const float *row = rows + ids[i] * row_step;
                if (c + RESCORE_AHEAD < width)
                    __builtin_prefetch(row + (c + RESCORE_AHEAD) * column_step);
                products[b * width + c] =
                    (double)row[c * column_step] * directions[owner[i] * width + c];
            }
        for (int64_t b = 0; b < block; b++)
            sums[i0 + b] = 0. + pairwise_sum(products + b * width, width);  /* numpy starts at +0 */
    }
    free(products);
    return 0;
}
