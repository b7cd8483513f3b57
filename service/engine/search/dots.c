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
 * the row's scale: the same bits whatever the batch or the tile, and within the bound rows.py's
 * float32_dot_error gives (a float32 dot product in any order).
 *
 * Loaded with ctypes (dots.py): no Python API here. A CPU without AVX-512F gets 0 from
 * dots_simd and the service keeps BLAS.
 */

#include <stddef.h>
#include <stdint.h>

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

#endif /* __x86_64__ */

/* 512 where this CPU runs AVX-512F, else 0 (the caller keeps BLAS). */
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
