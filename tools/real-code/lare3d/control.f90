! haloswap's small Lare3d case (tools/real-code/lare3d.sh writes it into its copy of the user's
! checkout; it is not Lare3d's file). Read at run time, so one build serves every case (the
! check sets them from --size, --steps, --layout):
!   HS_LARE3D_N      cells per axis (default 32)      HS_LARE3D_STEPS  steps (default 40)
!   HS_LARE3D_BC     user (walls, default) | periodic HS_LARE3D_PROCS  "px py pz": nprocx,
!                                                     nprocy, nprocz (default 0 0 0: MPI's)
! An ideal resistive gas with a pressure pulse in an oblique field and a shear flow
! (initial_conditions.f90), so every exchange carries changing data.
MODULE control

  USE shared_data
  USE normalise

  IMPLICIT NONE

  PRIVATE
  PUBLIC :: user_normalisation, control_variables, set_output_dumps

CONTAINS

  SUBROUTINE user_normalisation
    gamma = 5.0_num / 3.0_num
    mf = 1.2_num
    B_norm = 0.1_num
    L_norm = 1.e6_num
    rho_norm = 1.67e-4_num
  END SUBROUTINE user_normalisation

  SUBROUTINE control_variables
    INTEGER :: n, bc, procs(3)
    CHARACTER(LEN=32) :: text
    n = 32
    nsteps = 40
    bc = BC_USER
    procs = 0
    CALL env('HS_LARE3D_N', text)
    IF (LEN_TRIM(text) > 0) READ(text, *) n
    CALL env('HS_LARE3D_STEPS', text)
    IF (LEN_TRIM(text) > 0) READ(text, *) nsteps
    CALL env('HS_LARE3D_BC', text)
    IF (TRIM(text) == 'periodic') bc = BC_PERIODIC
    CALL env('HS_LARE3D_PROCS', text)
    IF (LEN_TRIM(text) > 0) READ(text, *) procs
    nx_global = n
    ny_global = n
    nz_global = n
    t_end = 1.0e3_num
    visc1 = 0.1_num
    visc2 = 0.5_num
    use_viscous_damping = .FALSE.
    nprocx = procs(1)
    nprocy = procs(2)
    nprocz = procs(3)
    x_min = -1.0_num
    x_max = 1.0_num
    x_stretch = .FALSE.
    y_min = -1.0_num
    y_max = 1.0_num
    y_stretch = .FALSE.
    z_min = -1.0_num
    z_max = 1.0_num
    z_stretch = .FALSE.
    resistive_mhd = .TRUE.
    eta_background = 1.0e-3_num
    j_max = 1.e10_num
    eta0 = 0.0_num
    conduction = .FALSE.
    heat_flux_limiter = .FALSE.
    flux_limiter = 0.1_num
    radiation = .FALSE.
    coronal_heating = .FALSE.
    rke = .FALSE.
    initial = IC_NEW
    restart_snapshot = 0
    cowling_resistivity = .FALSE.
    xbc_min = bc
    xbc_max = bc
    ybc_min = bc
    ybc_max = bc
    zbc_min = bc
    zbc_max = bc
    driven_boundary = .FALSE.
    boris = .FALSE.
    va_max = 10.0_num
    eos_number = EOS_IDEAL
    neutral_gas = .FALSE.
    cooling_term = .FALSE.
    alpha_av = 0.05_num
  END SUBROUTINE control_variables

  SUBROUTINE set_output_dumps
    data_dir = 'Data'
    dt_snapshots = 0.4_num
    dump_mask = .FALSE.
    dump_mask(1:10) = .TRUE.
    dump_mask(17:19) = .TRUE.
  END SUBROUTINE set_output_dumps

  SUBROUTINE env(name, text)
    CHARACTER(LEN=*), INTENT(IN) :: name
    CHARACTER(LEN=*), INTENT(OUT) :: text
    INTEGER :: st
    CALL GET_ENVIRONMENT_VARIABLE(name, text, STATUS=st)
    IF (st /= 0) text = ''
  END SUBROUTINE env

END MODULE control
