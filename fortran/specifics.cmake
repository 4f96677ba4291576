# The type x rank specific procedures of the generics haloswap_field (haloswap.F90) and
# haloswap_gfield (haloswap_geometry.F90), written at configure time from one template,
# fortran/specific.F90.in: adding a type is one line of HS_FORTRAN_TYPES, adding a rank one
# number in a RANKS list. Each specific only fixes the type and rank of its array and hands it
# to its module's describe(f, kind, shape, contiguous, ...).

# suffix|Fortran type|the modules' element kind code (include/haloswap.h's hs_type)
set(HS_FORTRAN_TYPES
  "f64|real(c_double)|T_F64"
  "f32|real(c_float)|T_F32"
  "i32|integer(c_int32_t)|T_I32"
  "i64|integer(c_int64_t)|T_I64")

# hs_fortran_specifics(<generic> RESULT <type> RANKS <rank>... [ARGS <text>] [DECLS <line>...]):
# for every type and rank, function <generic>_<suffix>_<rank>(a<ARGS>) returning type(<RESULT>),
# with the DECLS lines declaring the further arguments. Writes <generic>_procedures.inc (the
# generic's module procedure lines) and <generic>_bodies.inc under ${HS_FORTRAN_GENERATED}.
set(HS_FORTRAN_GENERATED ${CMAKE_BINARY_DIR}/fortran)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/specific.F90.in)
function(hs_fortran_specifics generic)
  cmake_parse_arguments(S "" "RESULT;ARGS" "RANKS;DECLS" ${ARGN})
  file(READ ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/specific.F90.in template)
  set(ARGS "${S_ARGS}")
  set(RESULT ${S_RESULT})
  set(DECLS "")
  foreach(d IN LISTS S_DECLS)
    string(APPEND DECLS "    ${d}\n")
  endforeach()
  set(procedures "")
  set(bodies "  ! Written by fortran/specifics.cmake from fortran/specific.F90.in.\n")
  foreach(rank IN LISTS S_RANKS)
    string(REPEAT ",:" ${rank} DIMS)
    string(SUBSTRING "${DIMS}" 1 -1 DIMS)
    string(REPEAT ",1" ${rank} FIRST)
    string(SUBSTRING "${FIRST}" 1 -1 FIRST)
    foreach(t IN LISTS HS_FORTRAN_TYPES)
      string(REPLACE "|" ";" t "${t}")
      list(GET t 0 suffix)
      list(GET t 1 TYPE)
      list(GET t 2 CODE)
      set(NAME ${generic}_${suffix}_${rank})
      string(APPEND procedures "    module procedure ${NAME}\n")
      string(CONFIGURE "${template}" body @ONLY)
      string(APPEND bodies "${body}")
    endforeach()
  endforeach()
  file(CONFIGURE OUTPUT ${HS_FORTRAN_GENERATED}/${generic}_procedures.inc
    CONTENT "${procedures}" @ONLY)
  file(CONFIGURE OUTPUT ${HS_FORTRAN_GENERATED}/${generic}_bodies.inc CONTENT "${bodies}" @ONLY)
endfunction()

hs_fortran_specifics(field RESULT haloswap_field RANKS 3 2)
hs_fortran_specifics(gfield RESULT haloswap_gfield RANKS 2 3 4
  ARGS ", halo_lo, layout, comp_first"
  DECLS "integer, intent(in) :: halo_lo(:)" "integer, intent(in), optional :: layout"
        "logical, intent(in), optional :: comp_first")
