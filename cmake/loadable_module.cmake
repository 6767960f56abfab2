# trialdb_loadable_module(TARGET OUTPUT_NAME): turns TARGET, an add_library(... MODULE ...), into
# the SQLite loadable module build/lib/OUTPUT_NAME.so. Its sources reach SQLite only through the
# host's sqlite3_api table (sqlext/sqlite_api.h), so --as-needed drops the libsqlite3 that
# trialdb_schema pulls in; only the entry point is exported and --exclude-libs hides the static
# libraries' symbols, so loading it into a process with its own SQLite is safe.
function(trialdb_loadable_module target output_name)
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${output_name}
    PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR})
  target_link_options(${target} PRIVATE -Wl,--as-needed -Wl,--exclude-libs,ALL -Wl,--no-undefined)
  target_link_libraries(${target} PRIVATE trialdb_schema trialdb_kernels nlohmann_json::nlohmann_json)
endfunction()
