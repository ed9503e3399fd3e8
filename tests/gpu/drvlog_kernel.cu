// drvlog_kernel.cu - one kernel launch and a synchronisation (tests/gpu/run.sh driverlog).
// Built for sm_80 only it has no code for the H200 (9.0): with lazy loading the load works and
// the launch fails with cudaErrorNoKernelImageForDevice (209) inside the runtime, in calls
// convguard does not wrap; built for sm_90 it runs.  Prints one line per step, exit 1 on error.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float *p, float v) { p[threadIdx.x] = v; }

int main()
{
    float *d = nullptr;
    cudaError_t e = cudaMalloc(&d, 256 * sizeof(float));
    printf("cudaMalloc: %s\n", cudaGetErrorName(e));
    fill<<<1, 256>>>(d, 1.0f);
    cudaError_t l = cudaGetLastError();
    printf("launch: %s\n", cudaGetErrorName(l));
    cudaError_t s = cudaDeviceSynchronize();
    printf("sync: %s (%s)\n", cudaGetErrorName(s), cudaGetErrorString(s));
    return e != cudaSuccess || l != cudaSuccess || s != cudaSuccess;
}
