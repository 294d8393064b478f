/*
 * decode_timeline.cu - where a decode call's time goes: the median time
 * between CUDA events of 40 calls queued back to back (K and V past L2,
 * as in decode_vs_torch.py), then one more call's blocks as
 * decode_timeline_patch.py's stamps saw them: when they started, how
 * long warp 0's loop took, how long the block's end took (the wait for
 * its other warps, the merges, and for the last range the group's
 * merge), and when they ended.  fp16, 32 query heads, one row.
 */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include <algorithm>
extern "C" {
#include "decode.h"
int decode_timeline(unsigned long long *h, int n);
}
#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
__global__ void fill(__half *p, size_t n, unsigned s) {
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		unsigned x = (unsigned)i * 2654435761u + s; x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
		p[i] = __float2half(((x & 0xffff) / 65536.0f - 0.5f) * 2.0f);
	}
}
__global__ void spin(long long ns) { long long t0 = clock64(); while (clock64() - t0 < ns) ; }
static double pct(std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v[(size_t)(p * (v.size() - 1))]; }
int main(int argc, char **argv) {
	int variant = argc > 1 ? atoi(argv[1]) : 0;
	int shapes[][3] = { {1, 8, 4096}, {1, 8, 32768}, {1, 8, 131072}, {8, 8, 131072}, {8, 8, 32768} };
	char err[256];
	for (auto &sh : shapes) {
		int B = sh[0], G = sh[1], Tk = sh[2], H = 32, D = 128;
		size_t kvn = (size_t)B * G * Tk * D, kvb = kvn * 2 * 2;
		int ncopy = std::max(1, std::min(16, (int)(((256u << 20) + kvb - 1) / kvb)));
		std::vector<__half *> ks(ncopy), vs(ncopy);
		for (int c = 0; c < ncopy; c++) {
			CK(cudaMalloc(&ks[c], kvn * 2)); CK(cudaMalloc(&vs[c], kvn * 2));
			fill<<<1024, 256>>>(ks[c], kvn, 2 * c + 1); fill<<<1024, 256>>>(vs[c], kvn, 2 * c + 2);
		}
		__half *q, *o; float *lse; void *ws;
		size_t qn = (size_t)B * H * D;
		CK(cudaMalloc(&q, qn * 2)); CK(cudaMalloc(&o, qn * 2)); CK(cudaMalloc(&lse, B * H * 4));
		fill<<<64, 256>>>(q, qn, 99);
		size_t wsb = decode_workspace_bytes(B, H, G, 1, Tk, 0);
		CK(cudaMalloc(&ws, wsb)); CK(cudaMemset(ws, 0, wsb));
		CK(cudaDeviceSynchronize());
		const int reps = 40;
		std::vector<cudaEvent_t> ev(reps + 1);
		for (auto &e : ev) CK(cudaEventCreate(&e));
		for (int w = 0; w < 3; w++)
			if (decode_attention(q, ks[w % ncopy], vs[w % ncopy], o, lse, B, H, G, 1, Tk, D, 0, 0, 0.0f, 0, variant, ws, wsb, 0, err, sizeof err)) { printf("%s\n", err); return 1; }
		spin<<<1, 1>>>(20000000);
		for (int r = 0; r < reps; r++) {
			CK(cudaEventRecord(ev[r]));
			decode_attention(q, ks[r % ncopy], vs[r % ncopy], o, lse, B, H, G, 1, Tk, D, 0, 0, 0.0f, 0, variant, ws, wsb, 0, err, sizeof err);
		}
		CK(cudaEventRecord(ev[reps]));
		CK(cudaDeviceSynchronize());
		std::vector<double> evt;
		for (int r = 0; r < reps; r++) { float ms; CK(cudaEventElapsedTime(&ms, ev[r], ev[r + 1])); evt.push_back(ms * 1e3); }
		int splits = decode_last_splits();
		int nb = splits * G * B;	/* one chunk a group at 4 rows */
		// one more call alone, then its timeline
		decode_attention(q, ks[1 % ncopy], vs[1 % ncopy], o, lse, B, H, G, 1, Tk, D, 0, 0, 0.0f, 0, variant, ws, wsb, 0, err, sizeof err);
		CK(cudaDeviceSynchronize());
		std::vector<unsigned long long> tl((size_t)nb * 3);
		CK((cudaError_t)decode_timeline(tl.data(), nb));
		unsigned long long t0 = ~0ull, tend = 0;
		for (int i = 0; i < nb; i++) { t0 = std::min(t0, tl[3 * i]); tend = std::max(tend, tl[3 * i + 2]); }
		std::vector<double> st, lp, fin, end;
		for (int i = 0; i < nb; i++) {
			st.push_back((tl[3 * i] - t0) / 1e3); lp.push_back((tl[3 * i + 1] - tl[3 * i]) / 1e3);
			fin.push_back((tl[3 * i + 2] - tl[3 * i + 1]) / 1e3); end.push_back((tl[3 * i + 2] - t0) / 1e3);
		}
		double mb = kvb / 1e6;
		printf("B%d G%d Tk%d v%d: %d blocks (%d splits), %.1f MB; event median %.2f us (min %.2f) = %.2f TB/s\n",
		    B, G, Tk, variant, nb, splits, mb, pct(evt, 0.5), pct(evt, 0), kvb / (pct(evt, 0.5) * 1e-6) / 1e12);
		printf("  span first start..last end %.2f us; starts 0..%.2f (p50 %.2f); loop min %.2f p50 %.2f max %.2f; "
		    "finish p50 %.2f max %.2f; ends min %.2f p50 %.2f p90 %.2f max %.2f\n",
		    (tend - t0) / 1e3, pct(st, 1), pct(st, 0.5), pct(lp, 0), pct(lp, 0.5), pct(lp, 1),
		    pct(fin, 0.5), pct(fin, 1), pct(end, 0), pct(end, 0.5), pct(end, 0.9), pct(end, 1));
		printf("  bytes / median loop: %.2f TB/s; bytes / (last end - median start): %.2f TB/s\n",
		    kvb / (pct(lp, 0.5) * 1e-6) / 1e12, kvb / ((pct(end, 1) - pct(st, 0.5)) * 1e-6) / 1e12);
		for (int c = 0; c < ncopy; c++) { cudaFree(ks[c]); cudaFree(vs[c]); }
		cudaFree(q); cudaFree(o); cudaFree(lse); cudaFree(ws);
		for (auto &e : ev) cudaEventDestroy(e);
	}
	return 0;
}
