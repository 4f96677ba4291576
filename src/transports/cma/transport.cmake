# Linux cross-memory attach (process_vm_readv, Linux >= 3.2 with glibc >= 2.15).
include(CheckSymbolExists)
set(CMAKE_REQUIRED_DEFINITIONS -D_GNU_SOURCE)
check_symbol_exists(process_vm_readv "sys/uio.h" HS_HAVE_PROCESS_VM_READV)
unset(CMAKE_REQUIRED_DEFINITIONS)
if(HS_HAVE_PROCESS_VM_READV)
  hs_add_transport(hs__transport_cma cma cma.c query.c ID HS_TRANSPORT_CMA
    SMPI_UNBUILT "${HS_NODE_ENGINE_SMPI}")
else()
  hs_unbuilt_transport(HS_TRANSPORT_CMA cma
    "needs Linux cross-memory attach (process_vm_readv), not found on this system")
endif()
