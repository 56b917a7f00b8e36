{
  "variables": {
    "neardup_core_sources": [
      "native/core/util/cpu.cc",
      "native/core/hash/murmur3.cc",
      "native/core/hash/murmur3_multi.cc",
      "native/core/hash/digest.cc",
      "native/core/hash/crc32c.cc",
      "native/core/text/utf8.cc",
      "native/core/text/normalize.cc",
      "native/core/text/shingle.cc",
      "native/core/text/shingle_batch.cc",
      "native/core/parallel/pool.cc",
      "native/core/io/file.cc",
      "native/core/io/header.cc",
      "native/core/filter/seen_set.cc",
      "native/core/filter/onion.cc",
      "native/core/filter/vertical.cc",
      "native/core/filter/paragraph_batch.cc"
    ],
    "neardup_binding_sources": [
      "native/binding/addon.cc",
      "native/binding/args.cc",
      "native/binding/texts.cc",
      "native/binding/shingles.cc",
      "native/binding/runtime.cc",
      "native/binding/paragraph_filter.cc"
    ]
  }
}
