//! Linear layers of GGUF block-quantized weights (Q5_0, Q8_0) multiplied with 8-bit activations,
//! the way llama.cpp runs these formats on a CPU: each 32-value block of a token's activations
//! is quantized to bytes with its own scale, the products are summed in integers, and only the
//! block sums are scaled in floating point. The f32 matrix product this replaces runs near
//! the CPU's floating-point peak on AVX2 machines; integer byte products (AVX2 `vpmaddubsw`) do 32
//! multiply-adds per instruction against 8 for f32.
//!
//! Weights keep the file's integers and block scales exactly for Q5_0 (−16..15). Q8_0
//! (−127..127) is rounded to half the resolution (−64..64, scale doubled) so that two
//! byte products of 255 × 64 still fit the instruction's 16-bit sums.

// The kernel is written with AVX2 intrinsics and writes the threads' disjoint output columns
// through one pointer; both need `unsafe`, confined to this module.
#![allow(unsafe_code)]

use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};

use crate::LlmError;

/// Values per block, as in the GGUF formats.
const BLOCK: usize = 32;
/// Output rows per tile: one AVX2 register of 32-bit lanes.
const TILE_ROWS: usize = 8;
/// Groups of 4 inputs per block (one byte-product instruction covers 4 inputs of 8 rows).
const GROUPS: usize = BLOCK / 4;
/// Activations are stored as q + 128 (0..=255) with q in −127..=127.
const ACT_OFFSET: i32 = 128;

/// A linear layer `y = x · Wᵀ` (`W` is `[rows, cols]`) with byte weights tiled for the kernel.
pub struct QuantLinear {
    rows: usize,
    cols: usize,
    /// Largest |weight integer|; decides how many byte products may be summed in 16 bits.
    max_weight: i32,
    /// `[tile][block][group][row in tile][4 inputs]`.
    weights: Vec<i8>,
    /// `[tile][block][row in tile]`: the weight block's scale.
    scales: Vec<f32>,
    /// `[tile][block][row in tile]`: −128 · Σ weights of the block, which cancels the
    /// activations' +128 offset.
    offsets: Vec<i32>,
}

/// Each 32-value block of each token's activations: bytes (q + 128) and one scale.
struct QuantActivations {
    tokens: usize,
    bytes: Vec<u8>,
    scales: Vec<f32>,
}

impl QuantLinear {
    /// Whether `dtype` goes through this kernel rather than the matrix library.
    pub fn handles(dtype: GgmlDType) -> bool {
        matches!(dtype, GgmlDType::Q5_0 | GgmlDType::Q8_0)
    }

    /// From a GGUF tensor of `[rows, cols]` Q5_0 or Q8_0 blocks.
    pub fn from_qtensor(t: &QTensor, device: &Device) -> Result<QuantLinear, LlmError> {
        let (block_bytes, halve) = match t.dtype() {
            GgmlDType::Q5_0 => (22, false),
            GgmlDType::Q8_0 => (34, true),
            other => {
                return Err(LlmError::Model(format!(
                    "整数矩阵乘法不支持 {other:?} 格式"
                )));
            }
        };
        let (rows, cols) = t.shape().dims2()?;
        let raw = t.data()?;
        let values = t.dequantize(device)?.flatten_all()?.to_vec1::<f32>()?;
        if cols % BLOCK != 0 || raw.len() != rows * cols / BLOCK * block_bytes {
            return Err(LlmError::Model(format!(
                "量化矩阵形状不符：{rows}×{cols}，{} 字节",
                raw.len()
            )));
        }
        // Every block starts with its f16 scale; the integers are value / scale, exactly.
        let scales: Vec<f32> = raw
            .chunks_exact(block_bytes)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect();
        let mut ints = Vec::with_capacity(values.len());
        let mut block_scales = Vec::with_capacity(scales.len());
        for (block, &d) in values.chunks_exact(BLOCK).zip(&scales) {
            let q = |v: f32| if d == 0.0 { 0 } else { (v / d).round() as i32 };
            if halve {
                ints.extend(
                    block
                        .iter()
                        .map(|&v| (q(v) as f32 / 2.0).round().clamp(-64.0, 64.0) as i8),
                );
                block_scales.push(d * 2.0);
            } else {
                ints.extend(block.iter().map(|&v| q(v).clamp(-16, 15) as i8));
                block_scales.push(d);
            }
        }
        Ok(QuantLinear::from_blocks(rows, cols, &ints, &block_scales))
    }

    /// From the integers (`[rows, cols]`, row-major) and one scale per 32-value block of a row.
    pub fn from_blocks(rows: usize, cols: usize, ints: &[i8], scales: &[f32]) -> QuantLinear {
        let blocks = cols / BLOCK;
        let tiles = rows.div_ceil(TILE_ROWS);
        let mut weights = vec![0i8; tiles * blocks * BLOCK * TILE_ROWS];
        let mut tile_scales = vec![0f32; tiles * blocks * TILE_ROWS];
        let mut offsets = vec![0i32; tiles * blocks * TILE_ROWS];
        for row in 0..rows {
            let (tile, r) = (row / TILE_ROWS, row % TILE_ROWS);
            for b in 0..blocks {
                let tb = tile * blocks + b;
                let block = &ints[row * cols + b * BLOCK..row * cols + (b + 1) * BLOCK];
                for (i, &w) in block.iter().enumerate() {
                    let (g, j) = (i / 4, i % 4);
                    weights[((tb * GROUPS + g) * TILE_ROWS + r) * 4 + j] = w;
                }
                tile_scales[tb * TILE_ROWS + r] = scales[row * blocks + b];
                offsets[tb * TILE_ROWS + r] =
                    -ACT_OFFSET * block.iter().map(|&w| w as i32).sum::<i32>();
            }
        }
        QuantLinear {
            rows,
            cols,
            max_weight: ints.iter().map(|&w| (w as i32).abs()).max().unwrap_or(0),
            weights,
            scales: tile_scales,
            offsets,
        }
    }

    /// Byte products summed in 16 bits before widening: each instruction adds two products of
    /// at most 255 · max_weight, and the sum must stay within ±32767. A divisor of 8 groups.
    fn depth(&self) -> usize {
        let per_instruction = 2 * 255 * self.max_weight.max(1);
        match 32_767 / per_instruction {
            0 => 0,
            1 => 1,
            2 | 3 => 2,
            4..=7 => 4,
            _ => 8,
        }
    }

    /// `[.., cols]` → `[.., rows]` for a CPU tensor of f32.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor, LlmError> {
        let dims = x.dims().to_vec();
        let Some((&cols, lead)) = dims.split_last() else {
            return Err(LlmError::Input("输入张量没有维度".into()));
        };
        if cols != self.cols {
            return Err(LlmError::Input(format!(
                "输入宽度 {cols} 与权重宽度 {} 不符",
                self.cols
            )));
        }
        let tokens = lead.iter().product::<usize>();
        let out = crate::qwen2::with_rows(x, |flat| self.matmul(flat, tokens))?;
        let mut shape = lead.to_vec();
        shape.push(self.rows);
        Ok(Tensor::from_vec(out, shape, x.device())?)
    }

    /// `x` is `[tokens, cols]`; returns `[tokens, rows]`.
    pub fn matmul(&self, x: &[f32], tokens: usize) -> Vec<f32> {
        self.matmul_with(x, tokens, Kernel::best(self.depth()))
    }

    fn matmul_with(&self, x: &[f32], tokens: usize, kernel: Kernel) -> Vec<f32> {
        let acts = quantize_activations(x, tokens, self.cols);
        let mut out = vec![0f32; tokens * self.rows];
        let tiles = self.rows.div_ceil(TILE_ROWS);
        let threads = candle_core::utils::get_num_threads().clamp(1, tiles.max(1));
        let per = tiles.div_ceil(threads);
        let dst = SharedOut(out.as_mut_ptr());
        std::thread::scope(|scope| {
            for t in 0..threads {
                let (acts, dst) = (&acts, &dst);
                scope.spawn(move || {
                    for tile in t * per..((t + 1) * per).min(tiles) {
                        // SAFETY: each thread writes only the columns of its own tiles.
                        unsafe { self.tile_into(tile, acts, kernel, dst.0) };
                    }
                });
            }
        });
        out
    }

    /// The weights, scales and offsets of tile `tile`.
    fn tile(&self, tile: usize) -> Tile<'_> {
        let blocks = self.cols / BLOCK;
        let per_tile = blocks * TILE_ROWS;
        Tile {
            weights: &self.weights[tile * per_tile * BLOCK..][..per_tile * BLOCK],
            scales: &self.scales[tile * per_tile..][..per_tile],
            offsets: &self.offsets[tile * per_tile..][..per_tile],
            blocks,
        }
    }

    /// Every token's outputs for the rows of `tile`, written into `dst` (`[tokens, rows]`).
    ///
    /// # Safety
    /// `dst` must hold `acts.tokens × self.rows` values.
    unsafe fn tile_into(
        &self,
        tile: usize,
        acts: &QuantActivations,
        kernel: Kernel,
        dst: *mut f32,
    ) {
        let view = self.tile(tile);
        let first_row = tile * TILE_ROWS;
        let rows_here = (self.rows - first_row).min(TILE_ROWS);
        let depth = self.depth();
        let mut m = 0;
        while m < acts.tokens {
            let mt = (acts.tokens - m).min(MAX_TOKENS);
            let mut sums = [[0f32; TILE_ROWS]; MAX_TOKENS];
            kernel.run(&view, acts, m, mt, depth, &mut sums);
            for (i, row) in sums[..mt].iter().enumerate() {
                // SAFETY: row m + i, columns first_row.. of a tokens × rows buffer.
                unsafe {
                    let out = dst.add((m + i) * self.rows + first_row);
                    std::ptr::copy_nonoverlapping(row.as_ptr(), out, rows_here);
                }
            }
            m += mt;
        }
    }
}

struct SharedOut(*mut f32);
// SAFETY: the pointer is only written at disjoint places by the threads of `matmul`.
unsafe impl Sync for SharedOut {}

/// Tokens per kernel call: their accumulators stay in registers against one tile's weights.
const MAX_TOKENS: usize = 8;

/// One tile's weights, scales and offset corrections, block after block.
struct Tile<'a> {
    weights: &'a [i8],
    scales: &'a [f32],
    offsets: &'a [i32],
    blocks: usize,
}

fn quantize_activations(x: &[f32], tokens: usize, cols: usize) -> QuantActivations {
    let mut bytes = vec![0u8; tokens * cols];
    let mut scales = vec![0f32; tokens * cols / BLOCK];
    for ((block, out), scale) in x[..tokens * cols]
        .chunks_exact(BLOCK)
        .zip(bytes.chunks_exact_mut(BLOCK))
        .zip(scales.iter_mut())
    {
        let max = block.iter().fold(0f32, |m, &v| m.max(v.abs()));
        let d = max / 127.0;
        let inv = if d > 0.0 { 1.0 / d } else { 0.0 };
        for (o, &v) in out.iter_mut().zip(block) {
            *o = ((v * inv).round().clamp(-127.0, 127.0) as i32 + ACT_OFFSET) as u8;
        }
        *scale = d;
    }
    QuantActivations {
        tokens,
        bytes,
        scales,
    }
}

/// The kernels, fastest first; each gives the same bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    /// 32-bit sums of four byte products per instruction (AVX-512 VNNI, 256-bit forms).
    Vnni,
    /// 16-bit sums of two byte products (AVX2), widened every `depth` instructions.
    Avx2,
    Portable,
}

impl Kernel {
    /// Those this CPU runs for a layer of the given 16-bit depth (`QuantLinear::depth`).
    fn available(depth: usize) -> Vec<Kernel> {
        let mut kernels = vec![];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512vnni")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("fma")
            {
                kernels.push(Kernel::Vnni);
            }
            if depth > 0
                && std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                kernels.push(Kernel::Avx2);
            }
        }
        let _ = depth;
        kernels.push(Kernel::Portable);
        kernels
    }

    fn best(depth: usize) -> Kernel {
        Kernel::available(depth)[0]
    }

    /// Sums of tokens `m..m + mt` against the tile's rows into `sums[token][row]`.
    fn run(
        self,
        tile: &Tile,
        acts: &QuantActivations,
        m: usize,
        mt: usize,
        depth: usize,
        sums: &mut [[f32; TILE_ROWS]; MAX_TOKENS],
    ) {
        /// `$f::<MT>($args)` with `mt` as the const token count.
        macro_rules! by_tokens {
            ($($f:ident)::+, $($arg:expr),*) => {
                match mt {
                    1 => $($f)::+::<1>($($arg),*),
                    2 => $($f)::+::<2>($($arg),*),
                    3 => $($f)::+::<3>($($arg),*),
                    4 => $($f)::+::<4>($($arg),*),
                    5 => $($f)::+::<5>($($arg),*),
                    6 => $($f)::+::<6>($($arg),*),
                    7 => $($f)::+::<7>($($arg),*),
                    _ => $($f)::+::<8>($($arg),*),
                }
            };
        }
        match self {
            // SAFETY: `available` found the instructions; `mt` is 1..=MAX_TOKENS and the tile
            // and activations hold `tile.blocks` blocks per row and per token.
            #[cfg(target_arch = "x86_64")]
            Kernel::Vnni => unsafe { by_tokens!(vnni::block_sums, tile, acts, m, sums) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { by_tokens!(avx2::tile_depth, tile, acts, m, depth, sums) },
            _ => portable(tile, acts, m, mt, sums),
        }
    }
}

/// The same sums without vector instructions (and without the 16-bit limit): exact integer
/// block sums, then one fused multiply-add per block, as the vector kernel does, so both give
/// identical results.
fn portable(
    tile: &Tile,
    acts: &QuantActivations,
    m: usize,
    mt: usize,
    sums: &mut [[f32; TILE_ROWS]; MAX_TOKENS],
) {
    let cols = tile.blocks * BLOCK;
    for (i, out) in sums[..mt].iter_mut().enumerate() {
        let token = m + i;
        for b in 0..tile.blocks {
            let a = &acts.bytes[token * cols + b * BLOCK..][..BLOCK];
            let da = acts.scales[token * tile.blocks + b];
            for (r, acc) in out.iter_mut().enumerate() {
                let mut sum = tile.offsets[b * TILE_ROWS + r];
                for (k, &byte) in a.iter().enumerate() {
                    let (g, j) = (k / 4, k % 4);
                    let w = tile.weights[((b * GROUPS + g) * TILE_ROWS + r) * 4 + j];
                    sum += byte as i32 * w as i32;
                }
                *acc = (sum as f32).mul_add(tile.scales[b * TILE_ROWS + r] * da, *acc);
            }
        }
    }
}

/// The vector kernels' common frame, for `MT` tokens against one tile: block after block, the
/// tile's eight groups of weights (`wv`), offset corrections (`offset`) and scales are loaded
/// once; for each token, `block_sum` gives the block's exact integer sums (8 rows, from the
/// token's block of activation bytes at `a`), which are scaled once and accumulated.
/// Expands inside an `unsafe` block of a function with AVX2 and FMA enabled.
#[cfg(target_arch = "x86_64")]
macro_rules! block_loop {
    ($tile:ident, $acts:ident, $m:ident, $sums:ident, $mt:ident,
     |$wv:ident, $offset:ident, $a:ident| $block_sum:block) => {{
        let cols = $tile.blocks * BLOCK;
        let mut acc = [_mm256_setzero_ps(); $mt];
        let w = $tile.weights.as_ptr();
        for b in 0..$tile.blocks {
            let wb = w.add(b * BLOCK * TILE_ROWS);
            let $wv: [__m256i; GROUPS] = std::array::from_fn(|g| {
                _mm256_loadu_si256(wb.add(g * 4 * TILE_ROWS) as *const __m256i)
            });
            let $offset =
                _mm256_loadu_si256($tile.offsets.as_ptr().add(b * TILE_ROWS) as *const __m256i);
            let scale = _mm256_loadu_ps($tile.scales.as_ptr().add(b * TILE_ROWS));
            for (i, acc) in acc.iter_mut().enumerate() {
                let token = $m + i;
                let $a = $acts.bytes.as_ptr().add(token * cols + b * BLOCK);
                let sum: __m256i = $block_sum;
                let da = _mm256_set1_ps(*$acts.scales.get_unchecked(token * $tile.blocks + b));
                *acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(scale, da), *acc);
            }
        }
        for (out, acc) in $sums.iter_mut().zip(acc) {
            _mm256_storeu_ps(out.as_mut_ptr(), acc);
        }
    }};
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn tile_depth<const MT: usize>(
        tile: &Tile,
        acts: &QuantActivations,
        m: usize,
        depth: usize,
        sums: &mut [[f32; TILE_ROWS]; MAX_TOKENS],
    ) {
        // SAFETY: the caller's guarantees pass on unchanged.
        unsafe {
            match depth {
                1 => block_sums::<MT, 1>(tile, acts, m, sums),
                2 => block_sums::<MT, 2>(tile, acts, m, sums),
                4 => block_sums::<MT, 4>(tile, acts, m, sums),
                _ => block_sums::<MT, 8>(tile, acts, m, sums),
            }
        }
    }

    /// One block at a time: the tile's 8 groups of weights stay in registers while each
    /// token's 4-byte groups are broadcast against them; `DEPTH` byte products are summed in
    /// 16 bits, widened to 32, and each block's sum is scaled once.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn block_sums<const MT: usize, const DEPTH: usize>(
        tile: &Tile,
        acts: &QuantActivations,
        m: usize,
        sums: &mut [[f32; TILE_ROWS]; MAX_TOKENS],
    ) {
        // SAFETY: every block index is below `tile.blocks`, every token below `acts.tokens`.
        unsafe {
            let ones = _mm256_set1_epi16(1);
            block_loop!(tile, acts, m, sums, MT, |wv, offset, a| {
                let group = |g: usize| {
                    _mm256_maddubs_epi16(
                        _mm256_set1_epi32(std::ptr::read_unaligned(a.add(g * 4) as *const i32)),
                        wv[g],
                    )
                };
                let mut sum = offset;
                let mut g = 0;
                while g < GROUPS {
                    let mut p = group(g);
                    for d in 1..DEPTH {
                        p = _mm256_add_epi16(p, group(g + d));
                    }
                    sum = _mm256_add_epi32(sum, _mm256_madd_epi16(p, ones));
                    g += DEPTH;
                }
                sum
            });
        }
    }
}

/// CPUs with VNNI (AMD Zen 4 and later, Intel server cores since Ice Lake) multiply bytes and
/// add four products straight into 32-bit sums in one instruction: no 16-bit stage, so no
/// depth limit, and the same integer sums (hence the same bits) as the other kernels.
#[cfg(target_arch = "x86_64")]
mod vnni {
    use super::*;
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2,fma,avx512vnni,avx512vl")]
    pub(super) unsafe fn block_sums<const MT: usize>(
        tile: &Tile,
        acts: &QuantActivations,
        m: usize,
        sums: &mut [[f32; TILE_ROWS]; MAX_TOKENS],
    ) {
        // SAFETY: every block index is below `tile.blocks`, every token below `acts.tokens`.
        unsafe {
            block_loop!(tile, acts, m, sums, MT, |wv, offset, a| {
                let group = |g: usize| {
                    _mm256_set1_epi32(std::ptr::read_unaligned(a.add(g * 4) as *const i32))
                };
                // Two chains of four, so consecutive instructions do not wait on each other.
                let mut even = offset;
                let mut odd = _mm256_setzero_si256();
                for g in (0..GROUPS).step_by(2) {
                    even = _mm256_dpbusd_epi32(even, group(g), wv[g]);
                    odd = _mm256_dpbusd_epi32(odd, group(g + 1), wv[g + 1]);
                }
                _mm256_add_epi32(even, odd)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The product in f64 from the integers and scales, with the activations as given.
    fn reference(
        rows: usize,
        cols: usize,
        ints: &[i8],
        scales: &[f32],
        x: &[f32],
        tokens: usize,
    ) -> Vec<f64> {
        let mut out = vec![0f64; tokens * rows];
        for t in 0..tokens {
            for r in 0..rows {
                out[t * rows + r] = (0..cols)
                    .map(|k| {
                        ints[r * cols + k] as f64
                            * scales[r * cols / BLOCK + k / BLOCK] as f64
                            * x[t * cols + k] as f64
                    })
                    .sum();
            }
        }
        out
    }

    fn layer(rows: usize, cols: usize, max: i8, seed: u64) -> (Vec<i8>, Vec<f32>) {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        let span = 2 * max as u32 + 1;
        let ints = (0..rows * cols)
            .map(|_| ((next() % span) as i32 - max as i32) as i8)
            .collect();
        let scales = (0..rows * cols / BLOCK)
            .map(|_| (next() % 1000) as f32 / 1e5)
            .collect();
        (ints, scales)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Any shape (rows not a multiple of the tile, any token count), both weight ranges:
        /// the vector kernel equals the portable one exactly, and both are within the
        /// activation rounding (half a step of each block's 1/127 scale) of the f64 product.
        #[test]
        fn products_match_the_reference(
            rows in 1usize..40,
            blocks in 1usize..6,
            tokens in 1usize..20,
            wide in any::<bool>(),
            seed in any::<u64>(),
            x in prop::collection::vec(-8f32..8.0, 20 * 6 * BLOCK),
        ) {
            let cols = blocks * BLOCK;
            let (ints, scales) = layer(rows, cols, if wide { 64 } else { 16 }, seed);
            let linear = QuantLinear::from_blocks(rows, cols, &ints, &scales);
            let x = &x[..tokens * cols];
            let got = linear.matmul(x, tokens);
            let want = reference(rows, cols, &ints, &scales, x, tokens);
            let acts = quantize_activations(x, tokens, cols);
            for t in 0..tokens {
                for r in 0..rows {
                    let i = t * rows + r;
                    // Bound: Σ |w·s| · (block max / 127) / 2 over the row.
                    let bound: f64 = (0..cols).map(|k| {
                        let step = acts.scales[t * blocks + k / BLOCK] as f64;
                        (ints[r * cols + k] as f64 * scales[r * blocks + k / BLOCK] as f64).abs() * step / 2.0
                    }).sum::<f64>() * 1.0001 + 1e-5;
                    prop_assert!((got[i] as f64 - want[i]).abs() <= bound, "{} vs {} (bound {})", got[i], want[i], bound);
                }
            }
            // Every kernel this CPU has gives the portable kernel's bits.
            let portable_out = linear.matmul_with(x, tokens, Kernel::Portable);
            for kernel in Kernel::available(linear.depth()) {
                prop_assert_eq!(&linear.matmul_with(x, tokens, kernel), &portable_out, "{:?}", kernel);
            }
        }
    }

    #[test]
    fn depth_keeps_sixteen_bit_sums_in_range() {
        let one = |max: i8| QuantLinear::from_blocks(1, BLOCK, &[max; BLOCK], &[1.0]).depth();
        assert_eq!(one(15), 4);
        assert_eq!(one(-16), 4);
        assert_eq!(one(64), 1);
        assert_eq!(
            one(127),
            0,
            "no 16-bit sum is safe: only the portable and VNNI kernels run"
        );
        assert!(!Kernel::available(0).contains(&Kernel::Avx2));
        // Extreme activations and weights, with every kernel of this CPU: sums that would
        // overflow 16 bits are still exact.
        for max in [-16i8, 15, 64, -64, 127, -127] {
            let linear = QuantLinear::from_blocks(1, BLOCK, &[max; BLOCK], &[1.0]);
            for kernel in Kernel::available(linear.depth()) {
                for x in [1f32, -1.0] {
                    let got = linear.matmul_with(&[x; BLOCK], 1, kernel)[0];
                    assert_eq!(
                        got,
                        32.0 * max as f32 * x / 127.0 * 127.0,
                        "max {max} x {x} {kernel:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn zero_activations_give_zero() {
        let (ints, scales) = layer(9, 64, 16, 7);
        let linear = QuantLinear::from_blocks(9, 64, &ints, &scales);
        assert!(linear.matmul(&[0.0; 128], 2).iter().all(|&v| v == 0.0));
    }
}
