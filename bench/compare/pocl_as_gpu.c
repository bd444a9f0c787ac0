/* A libOpenCL.so that PlaidML 0.7 loads in front of the ICD loader (libOpenCL.so.1), so that its
 * OpenCL device can be PoCL's. PlaidML's OpenCL HAL skips every device whose CL_DEVICE_TYPE is CPU
 * (tile/hal/opencl/device_set.cc), and PoCL's is. This library answers that query with GPU and
 * leaves everything else to the loader: PlaidML dlopens "libOpenCL.so" and looks each function up
 * in it, and what this library does not define is found in the loader it depends on. Built by
 * setup.sh; run.py's plaidml-opencl engine puts its folder on LD_LIBRARY_PATH. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>

typedef cl_int (*DeviceInfoFn)(cl_device_id, cl_device_info, size_t, void *, size_t *);

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id device, cl_device_info param,
                                                size_t size, void *value, size_t *size_ret) {
  static DeviceInfoFn loader_info;
  if (!loader_info) {
    void *loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!loader) return CL_INVALID_PLATFORM;
    loader_info = (DeviceInfoFn)dlsym(loader, "clGetDeviceInfo");
    if (!loader_info) return CL_INVALID_PLATFORM;
  }
  cl_int status = loader_info(device, param, size, value, size_ret);
  if (status == CL_SUCCESS && param == CL_DEVICE_TYPE && value && size >= sizeof(cl_device_type)) {
    cl_device_type *type = (cl_device_type *)value;
    if (*type & CL_DEVICE_TYPE_CPU) *type = (*type & ~(cl_device_type)CL_DEVICE_TYPE_CPU) | CL_DEVICE_TYPE_GPU;
  }
  return status;
}
