"""OpenCL mixin: the subgroup sizes a kernel can run at, and the OpenCL C
version programs are built for, on devices beside Intel's runtime.

* A device with cl_intel_required_subgroup_size runs a kernel at any size it
  lists, pinned with ``intel_reqd_sub_group_size``.
* A device of one subgroup size without that extension (Mesa rusticl: 8)
  runs every kernel at that size; the kernels leave the attribute out.
* Without ``-cl-std`` a compiler takes the highest OpenCL C 1.x version
  (OpenCL C 3.0, 5.8.4.5); a device whose subgroup built-ins exist only in
  OpenCL C 3.0 (no cl_khr_subgroups) gets ``-cl-std=CL3.0``.

Does not import ``opencl.py`` (that module imports this one).
"""

from __future__ import annotations

__all__ = ["SizesOpenCL", "REQD_SIZE_EXTENSION", "cl_std_option"]


class SizesOpenCL:
    def sized_subgroups(self, sg: int) -> str | None:
        """Why a kernel cannot run at subgroup size ``sg`` here, or None.

        With cl_intel_required_subgroup_size a kernel requires one of the
        device's sizes (``intel_reqd_sub_group_size``).  Without it, a device
        whose only subgroup size is ``sg`` runs every kernel at ``sg`` (OpenCL
        API 3.0, 3.2.2: subgroup sizes are chosen by the implementation; with
        one size there is no choice), so the kernel needs no attribute.  The
        kernels report ``get_max_sub_group_size()``, and a run checks it."""
        sizes = tuple(self.describe().subgroup_sizes or ())
        if not sizes:
            return f"device reports no subgroup sizes (cannot require {sg})"
        if self.has_extension(REQD_SIZE_EXTENSION):
            if sg not in sizes:
                return f"device has subgroup sizes {', '.join(map(str, sizes))}, not {sg}"
            return None
        if len(sizes) == 1 and sizes != (sg,):
            return f"device has one subgroup size, {sizes[0]}, not {sg}"
        if sizes != (sg,):
            return (
                f"cannot require subgroup size {sg}: device lacks {REQD_SIZE_EXTENSION} and has "
                f"subgroup sizes {', '.join(map(str, sizes))}"
            )
        return None

    @property
    def requires_subgroup_attribute(self) -> bool:
        """True where kernels pin their size with ``intel_reqd_sub_group_size``
        (the device has cl_intel_required_subgroup_size); False on a device of
        one subgroup size without it (:meth:`sized_subgroups`)."""
        return self.has_extension(REQD_SIZE_EXTENSION)

    @property
    def opencl_c_std(self) -> str:
        """The ``-cl-std`` option OpenCL C programs are built with here ("" for
        the compiler's default).  Without ``-cl-std`` a compiler takes the
        highest OpenCL C 1.x version (OpenCL C 3.0, 5.8.4.5 "-cl-std"); the
        subgroup built-ins exist there only through cl_khr_subgroups, else
        from OpenCL C 3.0 with feature __opencl_c_subgroups (OpenCL C 3.0,
        6.15.1, 6.15.16).  So a device whose default is 1.x, that lacks
        cl_khr_subgroups and lists OpenCL C 3.0 builds with ``-cl-std=CL3.0``
        (Mesa rusticl); every other device keeps its default."""
        if getattr(self, "_cl_std", None) is None:
            self._cl_std = cl_std_option(self.device, self.describe().extensions)
        return self._cl_std


REQD_SIZE_EXTENSION = "cl_intel_required_subgroup_size"


def cl_std_option(device, extensions) -> str:
    """:attr:`OpenCLBackend.opencl_c_std` from the device's queries."""
    default = str(getattr(device, "opencl_c_version", "") or "")
    if "cl_khr_subgroups" in extensions or not default.startswith("OpenCL C 1."):
        return ""
    try:
        # cl_version: major in bits 22.., minor in bits 12..21 (OpenCL API 3.0, 4.3.1 "Versioning")
        versions = {(v.version >> 22, (v.version >> 12) & 0x3FF) for v in device.opencl_c_all_versions}
        features = {f.name.strip() for f in device.opencl_c_features}
    except Exception:  # an OpenCL 1.x / 2.x device: no such queries
        return ""
    if (3, 0) in versions and "__opencl_c_subgroups" in features:
        return "-cl-std=CL3.0"
    return ""
