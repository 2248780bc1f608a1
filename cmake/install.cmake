# `make install` (cmake --install): the binaries (src/cli, src/shim), the lifecycle headers and
# their CMake package (src/lifecycle), and here the man page, bash/zsh/fish completions and the
# docs, in the places Debian's own tools use. `cpack -G DEB` packs the same tree into a .deb.
include(GNUInstallDirs)

# Completions are read from the built binary's --help, so they list exactly its commands and flags.
set(completions ${CMAKE_BINARY_DIR}/completions)
add_custom_command(
  OUTPUT ${completions}/zerodrop.bash ${completions}/_zerodrop ${completions}/zerodrop.fish
  COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
          bash ${CMAKE_SOURCE_DIR}/scripts/completions.sh $<TARGET_FILE:zerodrop> ${completions}
  DEPENDS zerodrop ${CMAKE_SOURCE_DIR}/scripts/completions.sh
  COMMENT "Generating bash, zsh and fish completions from zerodrop --help")
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/zerodrop.1.gz
  COMMAND sed -e "1,5s/zerodrop [0-9][0-9.]*/zerodrop ${PROJECT_VERSION}/"
          ${CMAKE_SOURCE_DIR}/docs/zerodrop.1 | gzip -9n > ${CMAKE_BINARY_DIR}/zerodrop.1.gz
  DEPENDS ${CMAKE_SOURCE_DIR}/docs/zerodrop.1)
# A sanitized build makes them only when asked (`--target zerodrop_install_files`): nobody installs
# it, and its completions cost ~20 s of sanitized `zerodrop --help` starts.
if(ZERODROP_SANITIZE)
  set(in_all "")
else()
  set(in_all ALL)
endif()
add_custom_target(zerodrop_install_files ${in_all} DEPENDS ${completions}/zerodrop.bash
  ${completions}/_zerodrop ${completions}/zerodrop.fish ${CMAKE_BINARY_DIR}/zerodrop.1.gz)

install(FILES ${CMAKE_BINARY_DIR}/zerodrop.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${completions}/zerodrop.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME zerodrop)
install(FILES ${completions}/_zerodrop DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${completions}/zerodrop.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
file(GLOB doc_pages ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${doc_pages} DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The .deb: everything above under /usr. The release binary is static, so it depends on nothing;
# shlibdeps still fills Depends for a dynamic build. Debug info is stripped, as Debian does.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME zerodrop)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "zerodrop maintainers <zerodrop@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "prove a Kubernetes rolling update drops zero requests; name the hole when it does not")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libboost-dev (>= 1.81)")  # for the lifecycle headers
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/package)
include(CPack)
