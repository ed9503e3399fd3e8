/* A CUDA C kernel that keeps 128 floats per thread in registers (built with -maxrregcount=255),
 * launched with 1024 threads: "too many resources requested for launch". */
#include <stdio.h>
#include <cuda_runtime.h>

__global__ void heavy(const float *in, float *out, int n)
{
    float a[128];
#pragma unroll
    for (int i = 0; i < 128; i++)
        a[i] = in[(threadIdx.x + i) % n];
    for (int k = 0; k < n; k++) {
#pragma unroll
        for (int i = 0; i < 128; i++)
            a[i] = a[i] * a[(i + 1) & 127] + in[k];
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 128; i++)
        s += a[i];
    out[threadIdx.x] = s;
}

int main(void)
{
    cudaFuncAttributes at;
    if (cudaFuncGetAttributes(&at, heavy) != cudaSuccess) {
        fprintf(stderr, "cudaFuncGetAttributes failed\n");
        return 1;
    }
    printf("kernel: %d registers per thread, at most %d threads per block\n", at.numRegs, at.maxThreadsPerBlock);
    if (at.numRegs * 1024 <= 65536) {
        printf("CORPUS2-SKIP: the compiler kept the kernel at %d registers: 1024 threads fit\n", at.numRegs);
        return 0;
    }
    float *in, *out;
    cudaMalloc(&in, 1024 * sizeof(float));
    cudaMalloc(&out, 1024 * sizeof(float));
    cudaMemset(in, 0, 1024 * sizeof(float));
    heavy<<<1, 1024>>>(in, out, 1024);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "CUDA error: %s (%s) at the launch of heavy<<<1, 1024>>>\n", cudaGetErrorString(e),
                cudaGetErrorName(e));
        return 1;
    }
    puts("no failure");
    return 0;
}
