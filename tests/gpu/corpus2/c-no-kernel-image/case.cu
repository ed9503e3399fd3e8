/* A CUDA C program built for sm_80 (A100) only, with no PTX, run on a GPU of compute capability
 * 9.0: the launch fails with "no kernel image is available for execution on the device"
 * (real-world row 18, for a program of one's own). */
#include <stdio.h>
#include <cuda_runtime.h>

__global__ void scale(float *p, float k) { p[threadIdx.x] *= k; }

int main(void)
{
    float *p;
    cudaMalloc(&p, 256 * sizeof(float));
    scale<<<1, 256>>>(p, 2.0f);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "CUDA error: %s (%s) at the launch of scale\n", cudaGetErrorString(e), cudaGetErrorName(e));
        return 1;
    }
    puts("no failure");
    return 0;
}
