/* haloswap as a communication method of LLNL's Comb benchmark. Ours, not Comb's:
 * tools/check-peer-bench copies it into a scratch copy of Comb (src/) and calls it after
 * Comb's own methods, in the same launch. Comb's mesh (MeshInfo: sizes, division, ghost
 * widths, periodicity), its variables in its host allocator's memory, and its timer phases:
 * post-send = hs_swap_start, wait-recv = hs_swap_complete; post-recv and wait-send have
 * nothing to do and are timed as Comb times them. One plan per transport named in
 * HALOSWAP_TRANSPORTS (space-separated, e.g. "p2p shm cma"), for each memory named in
 * HALOSWAP_COMB_ALLOC ("malloc", as Comb's host allocator, and/or "hs": hs_alloc memory, shm's
 * one-copy path). HALOSWAP_COMB_SYNC=1 adds Comb's cycles with only a zero-byte message to and
 * from every neighbour ("sync"). Comb's process grid goes to haloswap as a Cartesian
 * decomposition (hs_grid_decomp.hpp), HALOSWAP_COMB_BOXES=1: as boxes. */
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <haloswap.h>

#include "hs_grid_decomp.hpp"

#include "comb.hpp"

namespace COMB {

static void hs_ok(int rc, const char* call)
{
  if (rc == HS_OK) return;
  fprintf(stderr, "haloswap (Comb): %s: %s\n", call, hs_error_message());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Comb's own correctness values: owned zones hold their global zone index + var; after a swap
 * every ghost zone must hold its (periodically wrapped) neighbour's value. */
static long hs_check(MeshInfo& info, std::vector<DataT*>& vars, hs_plan plan)
{
  const IdxT* n = info.global.sizes;
  auto global = [&](IdxT i, IdxT a) { return ((i + info.global_offset[a]) % n[a] + n[a]) % n[a]; };
  auto value = [&](IdxT i, IdxT j, IdxT k, size_t v) {
    return DataT(global(i, 0) + n[0] * (global(j, 1) + n[1] * global(k, 2)) + v + 1);
  };
  auto own = [&](IdxT i, IdxT j, IdxT k) {
    return i >= info.min[0] && i < info.max[0] && j >= info.min[1] && j < info.max[1] &&
           k >= info.min[2] && k < info.max[2];
  };
  for (size_t v = 0; v < vars.size(); ++v)
    for (IdxT k = 0; k < info.len[2]; ++k)
      for (IdxT j = 0; j < info.len[1]; ++j)
        for (IdxT i = 0; i < info.len[0]; ++i)
          vars[v][i + j * info.stride[1] + k * info.stride[2]] = own(i, j, k) ? value(i, j, k, v) : -1.0;
  hs_ok(hs_swap(plan, (void* const*)vars.data()), "hs_swap");
  long bad = 0;
  for (size_t v = 0; v < vars.size(); ++v)
    for (IdxT k = 0; k < info.len[2]; ++k)
      for (IdxT j = 0; j < info.len[1]; ++j)
        for (IdxT i = 0; i < info.len[0]; ++i)
          bad += vars[v][i + j * info.stride[1] + k * info.stride[2]] != value(i, j, k, v);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return bad;
}

/* Comb's cycles with Comb's phases and kernels (every interior zone set before, every zone
 * after), the communication given as its four phases. */
static void cycles(CommInfo& comminfo, MeshInfo& info, std::vector<DataT*>& vars, IdxT ncycles,
                   Timer& tm, Timer& tm_total, const std::function<void()>& post_recv,
                   const std::function<void()>& post_send, const std::function<void()>& wait_recv,
                   const std::function<void()>& wait_send)
{
  CPUContext tm_con;
  tm.clear();
  tm_total.clear();
  MPI_Barrier(comminfo.cart.comm);
  tm_total.start(tm_con, "bench-comm");
  for (IdxT cycle = 0; cycle < ncycles; ++cycle) {
    tm.start(tm_con, "pre-comm");
    for (auto p : vars)
      for (IdxT k = info.min[2]; k < info.max[2]; ++k)
        for (IdxT j = info.min[1]; j < info.max[1]; ++j)
          for (IdxT i = info.min[0]; i < info.max[0]; ++i)
            p[i + j * info.stride[1] + k * info.stride[2]] = 1.0;
    tm.stop(tm_con);
    tm.start(tm_con, "post-recv");
    post_recv();
    tm.stop(tm_con);
    tm.start(tm_con, "post-send");
    post_send();
    tm.stop(tm_con);
    tm.start(tm_con, "wait-recv");
    wait_recv();
    tm.stop(tm_con);
    tm.start(tm_con, "wait-send");
    wait_send();
    tm.stop(tm_con);
    tm.start(tm_con, "post-comm");
    for (auto p : vars)
      for (IdxT z = 0; z < info.totallen; ++z) p[z] = 1.0;
    tm.stop(tm_con);
  }
  MPI_Barrier(comminfo.cart.comm);
  tm_total.stop(tm_con);
  print_timers(comminfo, tm, tm_total);
}

/* One transport: create, check, then Comb's cycles with hs_swap_start in post-send and
 * hs_swap_complete in wait-recv. */
static void hs_bench(CommInfo& comminfo, MeshInfo& info, std::vector<DataT*>& vars,
                     std::vector<hs_field>& fields, const std::string& name, bool hs_mem,
                     hs_decomp decomp, IdxT ncycles, Timer& tm, Timer& tm_total)
{
  hs_plan_desc desc;
  hs_plan_desc_init(&desc);
  for (int a = 0; a < 3; ++a) desc.depth[a] = info.ghost_widths[a];
  desc.stencil = HS_STENCIL_BOX; /* Comb exchanges faces, edges and corners */
  desc.nfields = (int)vars.size();
  desc.fields = fields.data();
  desc.transport_name = name.c_str();
  hs_plan plan;
  hs_ok(hs_plan_create(decomp, &desc, &plan), "hs_plan_create");
  fgprintf(FileGroup::all, "Starting test Comm haloswap-%s%s Mesh seq Host Buffers none\n",
           name.c_str(), hs_mem ? "+hs_alloc" : "");
  long bad = hs_check(info, vars, plan);
  fgprintf(FileGroup::all, "haloswap-%s (%s) check: %ld wrong ghost zones\n", name.c_str(),
           hs_plan_selected_transport(plan), bad);
  if (bad) MPI_Abort(MPI_COMM_WORLD, 1);
  void* const* arrays = (void* const*)vars.data();
  cycles(comminfo, info, vars, ncycles, tm, tm_total, [] {},
         [&] { hs_ok(hs_swap_start(plan, arrays), "hs_swap_start"); },
         [&] { hs_ok(hs_swap_complete(plan, arrays), "hs_swap_complete"); }, [] {});
  hs_plan_free(&plan);
}

/* Comb's cycles with no data moved: a zero-byte message to and from every neighbour process,
 * what any exchange waits for at the least (the neighbour's pre-comm done) before its halo
 * can be written. */
static void sync_bench(CommInfo& comminfo, MeshInfo& info, std::vector<DataT*>& vars,
                       IdxT ncycles, Timer& tm, Timer& tm_total)
{
  MPI_Comm comm = comminfo.cart.comm;
  int me;
  MPI_Comm_rank(comm, &me);
  std::vector<int> peers;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int c[3], d[3] = {dx, dy, dz};
        MPI_Cart_coords(comm, me, 3, c);
        for (int a = 0; a < 3; ++a) c[a] += d[a];
        int r = comminfo.cart.get_rank(c);
        if (r != me && std::find(peers.begin(), peers.end(), r) == peers.end()) peers.push_back(r);
      }
  fgprintf(FileGroup::all, "Starting test Comm sync Mesh seq Host Buffers none\n");
  const int np = (int)peers.size();
  std::vector<MPI_Request> req(2 * peers.size() + 1);
  char none = 0, sink[64];
  auto post_recv = [&] {
    for (int q = 0; q < np; ++q) MPI_Irecv(sink + q % 64, 0, MPI_CHAR, peers[q], 77, comm, &req[q]);
  };
  auto post_send = [&] {
    for (int q = 0; q < np; ++q) MPI_Isend(&none, 0, MPI_CHAR, peers[q], 77, comm, &req[np + q]);
  };
  cycles(comminfo, info, vars, ncycles, tm, tm_total, post_recv, post_send,
         [&] { MPI_Waitall(np, req.data(), MPI_STATUSES_IGNORE); },
         [&] { MPI_Waitall(np, req.data() + np, MPI_STATUSES_IGNORE); });
}

void test_cycles_haloswap(CommInfo& comminfo, MeshInfo& info, IdxT num_vars, IdxT ncycles,
                          Timer& tm, Timer& tm_total)
{
  const char* list = getenv("HALOSWAP_TRANSPORTS");
  const char* memories = getenv("HALOSWAP_COMB_ALLOC");
  int global[3], periodic[3], lo[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    global[a] = info.global.sizes[a];
    periodic[a] = info.global.periodic[a];
    lo[a] = info.global_min[a];
    hi[a] = info.global_max[a];
  }
  /* Comb's process grid as a Cartesian decomposition (hs_grid_decomp.hpp);
   * HALOSWAP_COMB_BOXES=1: its boxes as they are */
  const char* boxes = getenv("HALOSWAP_COMB_BOXES");
  hs_decomp decomp;
  int grid[3];
  hs_ok(hs_grid_decomp(comminfo.cart.comm, global, periodic, lo, hi, boxes && *boxes == '1',
                       &decomp, grid),
        "hs_grid_decomp");
  std::istringstream mems(memories ? memories : "malloc");
  for (std::string mem; mems >> mem;) {
    const bool hs_mem = mem == "hs";
    std::vector<DataT*> vars(num_vars);
    for (auto& p : vars) {
      void* q = nullptr;
      if (hs_mem) hs_ok(hs_alloc(decomp, info.totallen * sizeof(DataT), &q), "hs_alloc");
      else q = malloc(info.totallen * sizeof(DataT)); /* Comb's host allocator is malloc */
      p = static_cast<DataT*>(q);
    }
    std::vector<hs_field> fields;
    for (auto p : vars) {
      hs_field f = hs_field_array(HS_FLOAT64, p, HS_LAYOUT_XFAST, 0);
      for (int a = 0; a < 3; ++a) f.halo[a] = info.ghost_widths[a];
      fields.push_back(f);
    }
    std::istringstream names(list ? list : "p2p");
    for (std::string name; names >> name;)
      hs_bench(comminfo, info, vars, fields, name, hs_mem, decomp, ncycles, tm, tm_total);
    const char* sync = getenv("HALOSWAP_COMB_SYNC");
    if (!hs_mem && sync && *sync == '1') sync_bench(comminfo, info, vars, ncycles, tm, tm_total);
    for (auto p : vars) {
      if (hs_mem) hs_free(decomp, p);
      else free(p);
    }
  }
  hs_decomp_free(&decomp);
  tm.clear();
  tm_total.clear();
}

} // namespace COMB
