/* ghex_ref: bench/ghex_ref.h over GHEX's structured regular API (a context on the plan's
 * Cartesian communicator, one domain per rank, a halo generator with the swap depth on each
 * side and the grid's periodicity, a pattern, a communication object, one field descriptor
 * per field). Compiled against the GHEX sources bench/ghex/build.sh fetched and built. */
#include "ghex_ref.h"

#include <ghex/bulk_communication_object.hpp>
#include <ghex/communication_object.hpp>
#include <ghex/config.hpp>
#include <ghex/structured/pattern.hpp>
#include <ghex/structured/regular/domain_descriptor.hpp>
#include <ghex/structured/regular/field_descriptor.hpp>
#include <ghex/structured/regular/halo_generator.hpp>
#include <ghex/structured/regular/make_pattern.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <vector>

namespace {
using dim3 = std::integral_constant<int, 3>;
using domain_t = ghex::structured::regular::domain_descriptor<int, dim3>;
using halo_gen_t = ghex::structured::regular::halo_generator<int, dim3>;
using arr3 = std::array<int, 3>;
/* hs_bench's fields are z-fast: dimension 2 (z) has stride 1. */
using zfast = ::gridtools::layout_map<0, 1, 2>;

struct base {
  virtual ~base() = default;
  virtual void swap() = 0;
};

template <typename T>
struct impl : base {
  ghex::context ctx;
  std::vector<domain_t> domains;
  using pattern_t = decltype(ghex::make_pattern<ghex::structured::grid>(
      std::declval<ghex::context &>(), std::declval<halo_gen_t &>(),
      std::declval<std::vector<domain_t> &>()));
  std::unique_ptr<pattern_t> pattern;
  using co_t = decltype(ghex::make_communication_object<pattern_t>(std::declval<ghex::context &>()));
  std::unique_ptr<co_t> co;
  using field_t = ghex::structured::regular::field_descriptor<T, ghex::cpu, domain_t, zfast>;
  using info_t = decltype(std::declval<pattern_t &>()(std::declval<field_t &>()));
  std::vector<field_t> fields;
  std::vector<info_t> infos;

  impl(MPI_Comm cart, int nf, void **data, const int n[3], const int h[3], const int off[3],
       const int global[3], const int periodic[3], const int depth[3])
      : ctx(cart, false) {
    int rank;
    MPI_Comm_rank(cart, &rank);
    arr3 first{off[0], off[1], off[2]}, last{off[0] + n[0] - 1, off[1] + n[1] - 1,
                                             off[2] + n[2] - 1};
    domains.emplace_back(rank, first, last);
    std::array<int, 6> halos{depth[0], depth[0], depth[1], depth[1], depth[2], depth[2]};
    std::array<bool, 3> per{periodic[0] != 0, periodic[1] != 0, periodic[2] != 0};
    halo_gen_t gen(arr3{0, 0, 0}, arr3{global[0] - 1, global[1] - 1, global[2] - 1}, halos, per);
    pattern = std::make_unique<pattern_t>(
        ghex::make_pattern<ghex::structured::grid>(ctx, gen, domains));
    co = std::make_unique<co_t>(ghex::make_communication_object<pattern_t>(ctx));
    arr3 offsets{h[0], h[1], h[2]}, extents{n[0] + 2 * h[0], n[1] + 2 * h[1], n[2] + 2 * h[2]};
    fields.reserve((size_t)nf);
    for (int f = 0; f < nf; f++)
      fields.push_back(ghex::wrap_field<ghex::cpu, zfast>(domains[0], static_cast<T *>(data[f]),
                                                          offsets, extents));
    for (auto &fd : fields) infos.push_back((*pattern)(fd));
  }
  void swap() override { co->exchange(infos.begin(), infos.end()).wait(); }
};
} // namespace

struct ghex_ref {
  std::unique_ptr<base> b;
};

extern "C" ghex_ref *ghex_ref_create(MPI_Comm cart, int type, int nf, void **data,
                                     const int n[3], const int h[3], const int off[3],
                                     const int global[3], const int periodic[3],
                                     const int depth[3], char *why, size_t len) {
  try {
    auto *r = new ghex_ref;
    switch (type) {
    case 0: r->b = std::make_unique<impl<double>>(cart, nf, data, n, h, off, global, periodic, depth); break;
    case 1: r->b = std::make_unique<impl<float>>(cart, nf, data, n, h, off, global, periodic, depth); break;
    case 2: r->b = std::make_unique<impl<std::int32_t>>(cart, nf, data, n, h, off, global, periodic, depth); break;
    case 3: r->b = std::make_unique<impl<std::int64_t>>(cart, nf, data, n, h, off, global, periodic, depth); break;
    default:
      std::snprintf(why, len, "type %d is not an hs_type", type);
      delete r;
      return nullptr;
    }
    return r;
  } catch (const std::exception &e) {
    std::snprintf(why, len, "GHEX setup failed: %s", e.what());
    return nullptr;
  }
}

extern "C" int ghex_ref_swap(ghex_ref *r) {
  try {
    r->b->swap();
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "ghex_ref: exchange failed: %s\n", e.what());
    return 1;
  }
}

extern "C" void ghex_ref_free(ghex_ref *r) { delete r; }

extern "C" const char *ghex_ref_version(void) { return HS_GHEX_VERSION; }
