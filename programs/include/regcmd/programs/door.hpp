#pragma once
// The front doors of every program kind, written once; the kind is found from the spec's type:
//
//   compile time  fixed<spec>()          a constexpr program; a violated rule fails the
//                                        compilation with the rule's message
//   run time      build(spec)            the same program on the heap, or the same rule as an
//                                        error value
//                 build_into(w, spec)    the same into a program_writer over storage of the
//                                        caller's (nothing allocated)
//
// A spec names its kind with a declaration `Kind program_kind_of(const Spec&);` beside the
// kind (never defined: only its type is read), found by argument-dependent lookup. The
// kind-explicit forms below (build_kind, build_into_kind, build_fixed) are for a kind's author.
//
// Both take the same steps: resolve (the request's rules) -> the geometry the emitter and
// the packers share; emit into storage the kind sizes; then the program rules the kind asks
// for on what was emitted (every rule, or the structure only where each task was checked in
// full as it was prepared). The kinds (matmul, plan, ew, fused) give the four steps:
//
//   struct kind {
//     using spec = ...;  using geometry = ...;
//     static constexpr std::string_view name = "...";
//     template <class Soc> static constexpr result<geometry> resolve(const spec&);
//     static constexpr program_size size(const geometry&);      // storage, at most
//     static constexpr submit_options options(const geometry&);  // ping-pong, delta tasks
//     template <class Soc> static constexpr void emit(program_writer&, const geometry&);
//     static constexpr program_checks checks = ...;
//   };

#include <concepts>
#include <cstddef>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

#include <regcmd/core/error.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/task/heap_program.hpp>
#include <regcmd/task/program.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/program_rules.hpp>

namespace regcmd {

enum class program_checks : std::uint8_t { every_rule, structure };

template <class Kind>
concept program_kind = requires(const typename Kind::spec& s, const typename Kind::geometry& g, program_writer& w) {
  { Kind::name } -> std::convertible_to<std::string_view>;
  { Kind::template resolve<soc::rk3588>(s) } -> std::same_as<result<typename Kind::geometry>>;
  { Kind::size(g) } -> std::same_as<program_size>;
  { Kind::options(g) } -> std::same_as<submit_options>;
  Kind::template emit<soc::rk3588>(w, g);
  { Kind::checks } -> std::convertible_to<program_checks>;
};

// A program built at compile time: its geometry (what the packers need) and its code.
template <class Geometry, std::size_t Entries, std::size_t Tasks, std::size_t Slots>
struct fixed_program {
  Geometry geometry{};
  program<Entries, Tasks, Slots> code{};
  constexpr program_view view() const { return code.view(); }
};

// A program built at run time.
template <class Geometry>
struct runtime_program {
  Geometry geometry{};
  heap_code code{};
  program_view view() const { return code.view(); }
};

// The step every door shares: emit the program of geometry g, then check the program rules
// the kind asks for on what was written.
template <program_kind Kind, class Soc>
constexpr status emit_checked(program_writer& w, const typename Kind::geometry& g) {
  Kind::template emit<Soc>(w, g);
  if (status s = w.outcome(); !s) return s;
  const submit_options o = Kind::options(g);
  const program_view written{w.entries(), w.slots(), w.tasks(), o.pingpong, o.delta_tasks};
  if constexpr (Kind::checks == program_checks::every_rule) return validate<Soc>(written, Kind::name);
  else return validate_structure(written, Kind::name);
}

// soc-value-unknown: a SoC whose traits lack a number every program kind reads builds none
// (core/soc.hpp); no resolve or emit is instantiated for it.
template <program_kind Kind, class Soc>
constexpr error soc_refusal() {
  return make_error(rules::soc_value_unknown, Soc::name, soc::first_unknown_value<Soc>()).with_note(Kind::name);
}

// The run-time door of a kind.
template <program_kind Kind, class Soc = soc::rk3588>
result<runtime_program<typename Kind::geometry>> build_kind(const typename Kind::spec& spec) {
  if constexpr (!soc::programs_known<Soc>) {
    return soc_refusal<Kind, Soc>();
  } else {
    // on the heap: a graph's geometry of hundreds of ops is megabytes
    const auto g = std::unique_ptr<const result<typename Kind::geometry>>(
        new result<typename Kind::geometry>(Kind::template resolve<Soc>(spec)));
    if (!*g) return g->err();
    result<heap_code> code = write_on_heap(Kind::size(g->value()), Kind::options(g->value()),
                                           [&](program_writer& w) { return emit_checked<Kind, Soc>(w, g->value()); });
    if (!code) return code.err();
    return runtime_program<typename Kind::geometry>{g->value(), std::move(code).value()};
  }
}

// The run-time door without a heap: the program goes into `w`'s storage (Kind::size of the
// geometry is enough), and the geometry its packers need comes back.
template <program_kind Kind, class Soc = soc::rk3588>
constexpr result<typename Kind::geometry> build_into_kind(program_writer& w, const typename Kind::spec& spec) {
  if constexpr (!soc::programs_known<Soc>) {
    return soc_refusal<Kind, Soc>();
  } else {
    const result<typename Kind::geometry> g = Kind::template resolve<Soc>(spec);
    if (!g) return g.err();
    if (status s = emit_checked<Kind, Soc>(w, g.value()); !s) return s.err();
    return g;
  }
}

namespace detail {
// The request resolved once: the door's rule check and the build share it (a lookup table
// or a plan makes resolving a noticeable share of a compilation).
template <program_kind Kind, auto Spec, class Soc>
struct resolved {
  static constexpr result<typename Kind::geometry> value = Kind::template resolve<Soc>(Spec);
};

template <program_kind Kind, auto Spec, class Soc>
struct fixed_build {
  static constexpr typename Kind::geometry geometry = resolved<Kind, Spec, Soc>::value.value();
  static constexpr program_size size = Kind::size(geometry);
  using type = fixed_program<typename Kind::geometry, size.entries, size.tasks, size.slots>;
  static constexpr std::pair<type, status> build() {
    type out{geometry, {}};
    const submit_options options = Kind::options(geometry);
    out.code.pingpong = options.pingpong;
    out.code.delta_tasks = options.delta_tasks;
    status checked{};
    status s = fill(out.code, [&](program_writer& w) { checked = emit_checked<Kind, Soc>(w, geometry); });
    return {out, s ? checked : s};
  }
  static constexpr std::pair<type, status> built = build();
};
}  // namespace detail

namespace detail {
template <program_kind Kind, typename Kind::spec Spec, class Soc>
constexpr auto build_fixed_known() {
  constexpr const result<typename Kind::geometry>& g = resolved<Kind, Spec, Soc>::value;
  static_assert(report<violated_rule(g), violated_value(g)>());
  if constexpr (g.ok()) {
    using fixed = fixed_build<Kind, Spec, Soc>;
    static_assert(report<violated_rule(fixed::built.second), violated_value(fixed::built.second)>());
    return fixed::built.first;
  } else {
    return fixed_program<typename Kind::geometry, 1, 1, 1>{};  // not reached: the report above failed
  }
}
template <class Soc>
constexpr const rule* soc_violation() {
  return soc::programs_known<Soc> ? &no_violation : &rules::soc_value_unknown;
}
}  // namespace detail

// The compile-time door of a kind: a violated rule fails here with the rule's message.
template <program_kind Kind, typename Kind::spec Spec, class Soc = soc::rk3588>
constexpr auto build_fixed() {
  static_assert(report<detail::soc_violation<Soc>()>());
  if constexpr (soc::programs_known<Soc>) return detail::build_fixed_known<Kind, Spec, Soc>();
  else return fixed_program<typename Kind::geometry, 1, 1, 1>{};  // not reached: the report above failed
}

// The kind a spec type builds.
template <class Spec>
using kind_for = decltype(program_kind_of(std::declval<const Spec&>()));

template <class Spec>
concept program_spec = requires(const Spec& s) { program_kind_of(s); } && program_kind<kind_for<Spec>>;

// The doors.
template <class Soc = soc::rk3588, program_spec Spec>
result<runtime_program<typename kind_for<Spec>::geometry>> build(const Spec& spec) {
  return build_kind<kind_for<Spec>, Soc>(spec);
}

template <class Soc = soc::rk3588, program_spec Spec>
constexpr result<typename kind_for<Spec>::geometry> build_into(program_writer& w, const Spec& spec) {
  return build_into_kind<kind_for<Spec>, Soc>(w, spec);
}

template <auto Spec, class Soc = soc::rk3588>
  requires program_spec<std::remove_cvref_t<decltype(Spec)>>
constexpr auto fixed() {
  return build_fixed<kind_for<std::remove_cvref_t<decltype(Spec)>>, Spec, Soc>();
}

}  // namespace regcmd
