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

# sets app (the application directory $1, absolute), java (startup_java) and what archive_for sets
startup_init() {
  app=$(cd "$1" && pwd)
  java=$(startup_java)
  archive_for "$java" "$app"
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

# the JDK's feature version (17, 21, 25...) of java $1
java_feature() {
  "$1" -XshowSettings:properties -version 2>&1 | awk -F' = ' '/java.specification.version/ { print $2; exit }'
}

# sets archive (its path), make_flags (the options of the training start) and use_flags (of every start with it) for
# java $1 and the application directory $2
archive_for() {
  local feature
  feature=$(java_feature "$1")
  if [[ -z $feature ]]; then
    echo "cannot tell the version of $1" >&2
    return 1
  fi
  if ((feature >= 25)); then
    archive=$2/startup.aot
    # the cached adapters of JDK 25.0.3 fail to link at every start that uses the cache, with two warnings in the
    # log; the classes and profiles (the gain) do not depend on them
    make_flags=(-XX:AOTCacheOutput="$archive" -XX:+UnlockDiagnosticVMOptions -XX:-AOTAdapterCaching)
    use_flags=(-XX:AOTCache="$archive" -XX:+UnlockDiagnosticVMOptions -XX:-AOTAdapterCaching)
  else
    archive=$2/startup.jsa
    make_flags=(-XX:ArchiveClassesAtExit="$archive")
    use_flags=(-XX:SharedArchiveFile="$archive")
  fi
}

# the JDK an archive is made with and valid for: its home and its build, one line each, from java $1
archive_jdk() {
  "$1" -XshowSettings:properties -version 2>&1 | awk -F' = ' '/^ *java\.home = |^ *java\.vm\.version = / { print }'
}

# whether the archive that archive_for named fits java $1 and the jars of application directory $2: made by that JDK
# (its .id file) after the last package of the jars (newer than each jar that a package writes again)
archive_fits() {
  local jar
  [[ -s $archive && -f $archive.id ]] || return 1
  [[ "$(archive_jdk "$1")" == "$(cat "$archive.id")" ]] || return 1
  for jar in "$2"/quarkus-run.jar "$2"/app/*.jar "$2"/quarkus/*.jar; do
    [[ $archive -nt $jar ]] || return 1
  done
}
