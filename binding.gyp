{
  "includes": ["native/sources.gypi"],
  "targets": [
    {
      "target_name": "neardup_zstd",
      "type": "static_library",
      "sources": [
        # Expands to nothing: copies zstd's C sources from node_modules/zstd-napi (tools/zstd-sources.mjs).
        "<!@(node tools/zstd-sources.mjs)",
        "<@(neardup_zstd_sources)"
      ],
      "defines": ["ZSTD_DISABLE_ASM", "ZSTD_NO_TRACE", "XXH_NAMESPACE=ZSTD_", "ZSTDLIB_VISIBLE=", "ZSTDERRORLIB_VISIBLE="],
      "cflags": ["-O3", "-fvisibility=hidden", "-fPIC"],
      "xcode_settings": { "GCC_SYMBOLS_PRIVATE_EXTERN": "YES", "OTHER_CFLAGS": ["-O3"] },
      "direct_dependent_settings": { "include_dirs": ["native/third_party/zstd/lib"] }
    },
    {
      "target_name": "neardup",
      "dependencies": ["neardup_zstd"],
      "sources": ["<@(neardup_core_sources)", "<@(neardup_binding_sources)"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native/core"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED", "NEARDUP_HAVE_NODE_OPENSSL=1"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-std=gnu++20"],
      "cflags": ["-O3", "-fvisibility=hidden", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-fvisibility=hidden"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "GCC_SYMBOLS_PRIVATE_EXTERN": "YES",
        "OTHER_CFLAGS": ["-O3"]
      },
      "msvs_settings": {
        "VCCLCompilerTool": { "ExceptionHandling": 1, "AdditionalOptions": ["/std:c++17"] }
      },
      "conditions": [
        ["OS=='win'", {
          "msbuild_toolset": "ClangCL",
          "defines": ["NOMINMAX", "WIN32_LEAN_AND_MEAN"]
        }]
      ]
    }
  ]
}
