package gpu

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

// The CUDA driver API, loaded at run time: the binary runs on login nodes
// with no driver, and a probe that cannot load it says so.
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;

static void *lib;
static CUresult (*pInit)(unsigned int);
static CUresult (*pDeviceGet)(CUdevice *, int);
static CUresult (*pDeviceGetAttribute)(int *, int, CUdevice);
static CUresult (*pDeviceGetName)(char *, int, CUdevice);
static CUresult (*pPrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*pPrimaryCtxRelease)(CUdevice);
static CUresult (*pCtxSetCurrent)(CUcontext);
static CUresult (*pCtxSynchronize)(void);
static CUresult (*pMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*pMemFree)(CUdeviceptr);
static CUresult (*pMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);

// probe_load returns 0, or -1 when the library or a symbol is missing.
static int probe_load(void) {
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) return -1;
#define LOAD(p, name) if (!(*(void **)(&p) = dlsym(lib, name))) return -1;
	LOAD(pInit, "cuInit")
	LOAD(pDeviceGet, "cuDeviceGet")
	LOAD(pDeviceGetAttribute, "cuDeviceGetAttribute")
	LOAD(pDeviceGetName, "cuDeviceGetName")
	LOAD(pPrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
	LOAD(pPrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")
	LOAD(pCtxSetCurrent, "cuCtxSetCurrent")
	LOAD(pCtxSynchronize, "cuCtxSynchronize")
	LOAD(pMemAlloc, "cuMemAlloc_v2")
	LOAD(pMemFree, "cuMemFree_v2")
	LOAD(pMemcpyDtoD, "cuMemcpyDtoD_v2")
#undef LOAD
	return 0;
}

static double now_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// probe_copy measures device 0: its SM count as this process sees it (an
// MPS client sees its share) and the rate of device-to-device copies of
// bytes each, repeated for about seconds. step says which call failed.
static CUresult probe_copy(size_t bytes, double seconds, int *sms, char *name, int namelen,
		double *bytes_per_s, int *step) {
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr a = 0, b = 0;
	CUresult r;
	*step = 1; if ((r = pInit(0))) return r;
	*step = 2; if ((r = pDeviceGet(&dev, 0))) return r;
	*step = 3; if ((r = pDeviceGetAttribute(sms, 16, dev))) return r; // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	*step = 4; if ((r = pDeviceGetName(name, namelen, dev))) return r;
	*step = 5; if ((r = pPrimaryCtxRetain(&ctx, dev))) return r;
	*step = 6; if ((r = pCtxSetCurrent(ctx))) goto release;
	*step = 7; if ((r = pMemAlloc(&a, bytes))) goto release;
	*step = 8; if ((r = pMemAlloc(&b, bytes))) goto release;
	*step = 9;
	for (int i = 0; i < 3; i++) if ((r = pMemcpyDtoD(b, a, bytes))) goto release; // warm up
	if ((r = pCtxSynchronize())) goto release;
	double start = now_s(), end = start;
	long n = 0;
	while (end - start < seconds) {
		for (int i = 0; i < 8; i++, n++) if ((r = pMemcpyDtoD(b, a, bytes))) goto release;
		if ((r = pCtxSynchronize())) goto release;
		end = now_s();
	}
	*bytes_per_s = 2.0 * bytes * n / (end - start); // read once, written once
	*step = 0;
release:
	if (a) pMemFree(a);
	if (b) pMemFree(b);
	pPrimaryCtxRelease(dev);
	return r;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/migadvisor/migadvisor/slurm"
)

var probeSteps = []string{"", "cuInit", "cuDeviceGet", "cuDeviceGetAttribute", "cuDeviceGetName",
	"cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuMemAlloc", "cuMemAlloc", "cuMemcpyDtoD"}

// MeasureSlice measures the GPU this process sees (device 0) through the
// CUDA driver: its SMs (under MPS, the share the client was granted) and
// its device-to-device copy bandwidth with two buffers of bytes each,
// copied for about d. A copy runs on the SMs, so under MPS it sees what
// the granted SMs can draw from the memory system: the bandwidth an
// emulated slice really has, which is not the real slice's.
func MeasureSlice(bytes int, d time.Duration) (slurm.SliceMeasure, error) {
	if C.probe_load() != 0 {
		return slurm.SliceMeasure{}, errors.New("the CUDA driver (libcuda.so.1) cannot be loaded")
	}
	var sms, step C.int
	var rate C.double
	name := make([]byte, 256)
	r := C.probe_copy(C.size_t(bytes), C.double(d.Seconds()), &sms, (*C.char)(unsafe.Pointer(&name[0])), C.int(len(name)), &rate, &step)
	if r != 0 {
		return slurm.SliceMeasure{}, fmt.Errorf("%s failed with CUDA error %d", probeSteps[step], int(r))
	}
	n := 0
	for n < len(name) && name[n] != 0 {
		n++
	}
	return slurm.SliceMeasure{Device: string(name[:n]), SMs: int(sms), CopyGBs: math.Round(float64(rate)/1e9*10) / 10}, nil
}
