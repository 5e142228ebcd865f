# shellcheck shell=bash disable=SC2034  # sourced: make_flags and use_flags are read by the scripts that source it
# The start-up archive of a packaged Fulcrum, shared by scripts/startup-archive.sh (makes it) and scripts/run.sh
# (starts Fulcrum with it). Sourced, not run.
#
# The archive holds the classes a start loads, already parsed, verified and linked, so that the next start maps them
# instead of doing that work again. Which kind depends on the JDK that runs Fulcrum:
#   - JDK 25 or later: an AOT cache (JEP 483 and 515: classes loaded and linked, and the methods' profiles), startup.aot
#   - JDK 17 to 24: a dynamic class-data sharing archive, startup.jsa
# Either is made by one training start of the packaged jar (on a data directory of its own, thrown away) and is only
# valid for the JDK and the jars it was made with: startup.aot.id or startup.jsa.id records the JDK, and run.sh uses
# the archive only while it is that JDK and the archive is newer than the jars (a JVM given a stale archive says so in
# the log and starts without it).
#
# The jar is packaged as Quarkus's aot-jar (quarkus.package.jar.type): every class on the JDK's own class path, which
# is what both kinds of archive can hold (the default fast-jar loads the application through Quarkus's own class
# loader, whose classes no archive keeps).

# sets app (the application directory $1, absolute), java (startup_java), jdk (the JDK an archive is valid for: its
# java.home and java.vm.version lines), feature (its version: 17, 21, 25...), archive (the archive's path for that
# JDK), make_flags (the options of the training start) and use_flags (of every start with the archive); java is asked
# once, since run.sh pays for each JVM it starts before Fulcrum's
startup_init() {
  local settings
  app=$(cd "$1" && pwd)
  java=$(startup_java)
  settings=$("$java" -XshowSettings:properties -version 2>&1)
  feature=$(awk -F' = ' '/java\.specification\.version/ { print $2; exit }' <<<"$settings")
  jdk=$(awk -F' = ' '/^ *java\.home = |^ *java\.vm\.version = / { print }' <<<"$settings")
  if [[ -z $feature ]]; then
    echo "cannot tell the version of $java" >&2
    return 1
  fi
  if ((feature >= 25)); then
    archive=$app/startup.aot
    # the cached adapters of JDK 25.0.3 fail to link at every start that uses the cache, with two warnings in the
    # log; the classes and profiles (the gain) do not depend on them
    make_flags=(-XX:AOTCacheOutput="$archive" -XX:+UnlockDiagnosticVMOptions -XX:-AOTAdapterCaching)
    use_flags=(-XX:AOTCache="$archive" -XX:+UnlockDiagnosticVMOptions -XX:-AOTAdapterCaching)
  else
    archive=$app/startup.jsa
    make_flags=(-XX:ArchiveClassesAtExit="$archive")
    use_flags=(-XX:SharedArchiveFile="$archive")
  fi
}

# the java to run: FULCRUM_JAVA, else $JAVA_HOME/bin/java, else java on the PATH
startup_java() {
  if [[ -n ${FULCRUM_JAVA:-} ]]; then
    echo "$FULCRUM_JAVA"
  elif [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then
    echo "$JAVA_HOME/bin/java"
  else
    command -v java
  fi
}

# whether the archive fits the JDK and the jars that startup_init found: made by that JDK (its .id file) after the
# last package of the jars (newer than each jar that a package writes again)
archive_fits() {
  local jar
  [[ -s $archive && -f $archive.id ]] || return 1
  [[ $jdk == "$(cat "$archive.id")" ]] || return 1
  for jar in "$app"/quarkus-run.jar "$app"/app/*.jar "$app"/quarkus/*.jar; do
    [[ $archive -nt $jar ]] || return 1
  done
}
