/* haloswap_comm: a runtime for GHEX's cartex benchmark (ghex-org/ghexbench) over haloswap.
 * Ours, not cartex's: tools/check-peer-bench copies it into a scratch copy of cartex as
 * src/runtime/haloswap_comm/. One plan per rank swaps all fields at once (box stencil, depth =
 * cartex's halo on every axis, periodic, as cartex's own runtimes). The transport is a run-time
 * choice: HALOSWAP_TRANSPORT (p2p when unset), e.g. shm, cma, nbr, rma-fence, auto.
 * --hs-alloc moves cartex's fields into hs_alloc memory, so shm can copy straight from the
 * neighbour's field (what a haloswap user does); without it the fields stay cartex's new[]. */
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <type_traits>
#include <vector>

#include <haloswap.h>

#include "hs_grid_decomp.hpp"

#include <cartex/runtime/runtime.hpp>

namespace ghexbench
{
namespace cartex
{
class runtime::impl
{
    runtime&           m_base;
    hs_decomp          m_decomp = nullptr;
    hs_plan            m_plan = nullptr;
    bool               m_hs_alloc;
    int                m_grid[3]; /* process grid, zeros for boxes */
    std::vector<void*> m_arrays;

    /* Any haloswap error ends the run on every rank, with haloswap's own message. */
    static void ok(int rc, const char* call)
    {
        if (rc == HS_OK) return;
        std::fprintf(stderr, "haloswap_comm: %s: %s\n", call, hs_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

  public:
    impl(runtime& base, options_values const& options)
    : m_base{base}
    , m_hs_alloc{options.is_set("hs-alloc")}
    {
        /* cartex's own decomposition: a Cartesian one when its boxes form a process grid
         * (hs_grid_decomp.hpp), else the boxes as they are; --hs-boxes: boxes always. */
        auto const& dom = base.m_domains[0];
        int         global[3], lo[3], hi[3], periodic[3] = {1, 1, 1};
        for (int a = 0; a < 3; ++a)
        {
            global[a] = base.m_decomposition.last_domain_coord()[a] + 1;
            lo[a] = dom.domain_coord[a];
            hi[a] = lo[a] + dom.domain_ext[a];
        }
        ok(hs_grid_decomp(base.m_decomposition.mpi_comm(), global, periodic, lo, hi,
               options.is_set("hs-boxes"), &m_decomp, m_grid),
            "hs_grid_decomp");
    }

    ~impl()
    {
        if (m_plan) hs_plan_free(&m_plan);
        if (m_hs_alloc) /* hs_free is collective, in hs_alloc's order */
            for (auto& f : m_base.m_raw_fields[0]) hs_free(m_decomp, f.m_host_memory.release());
        if (m_decomp) hs_decomp_free(&m_decomp);
    }

    void init(int j)
    {
        using real = runtime::real_type;
        std::vector<hs_field> fields;
        for (auto& f : m_base.m_raw_fields[j])
        {
            if (m_hs_alloc)
            {
                void* p;
                ok(hs_alloc(m_decomp, f.size() * sizeof(real), &p), "hs_alloc");
                std::memcpy(p, f.data(), f.size() * sizeof(real));
                f.m_host_memory.reset(static_cast<real*>(p)); /* released before hs_free */
            }
            hs_field hf = hs_field_array(std::is_same<real, float>::value ? HS_FLOAT32
                                                                            : HS_FLOAT64,
                f.data(), HS_LAYOUT_XFAST, m_base.m_halo);
            hf.halo[2] = m_base.m_halo;
            fields.push_back(hf);
            m_arrays.push_back(f.data());
        }
        hs_plan_desc desc;
        hs_plan_desc_init(&desc);
        for (int a = 0; a < 3; ++a) desc.depth[a] = m_base.m_halo;
        desc.stencil = HS_STENCIL_BOX;
        desc.nfields = static_cast<int>(fields.size());
        desc.fields = fields.data();
        ok(hs_plan_create(m_decomp, &desc, &m_plan), "hs_plan_create");
        if (m_base.m_rank == 0)
            std::cout << "haloswap transport " << hs_plan_transport(m_plan) << " (selected "
                      << hs_plan_selected_transport(m_plan) << "), fields in "
                      << (m_hs_alloc ? "hs_alloc" : "cartex's new[]") << " memory, "
                      << (m_grid[0] ? "Cartesian " + std::to_string(m_grid[0]) + "x" +
                                          std::to_string(m_grid[1]) + "x" + std::to_string(m_grid[2])
                                    : std::string("box")) << " decomposition" << std::endl;
    }

    void step(int) { ok(hs_swap(m_plan, m_arrays.data()), "hs_swap"); }
    void exit(int) {}
    std::string info() const { return "haloswap_comm"; }
};

void print_runtime_config() { std::cout << " -- haloswap " << hs_version(0, 0, 0) << std::endl; }

options&
runtime::add_options(options& opts)
{
    return opts("hs-alloc", "fields in hs_alloc memory (shm's one-copy path)")(
        "hs-boxes", "pass the decomposition as boxes even where it is a process grid");
}

bool
runtime::check_options(options_values const& opts)
{
    auto t = opts.get<std::array<int, 3>>("thread");
    if (t[0] * t[1] * t[2] == 1) return true;
    std::cerr << "haloswap_comm: --thread " << t[0] << " " << t[1] << " " << t[2]
              << ": one thread per rank only (a plan is one rank's box)" << std::endl;
    return false;
}
} // namespace cartex
} // namespace ghexbench

#include "../runtime_inc.cpp"
