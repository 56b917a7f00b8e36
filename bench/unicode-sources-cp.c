// Part of bench/unicode-sources.sh: NFC, NFKC, NFKC_Casefold of every code point by utf8proc, as hex UTF-8.
#include <stdio.h>
#include <stdlib.h>
#include <utf8proc.h>
int main(void){ /* per code point: cp \t NFC \t NFKC \t NFKC_Casefold (hex cps) */
  for (utf8proc_int32_t c=0;c<=0x10FFFF;c++){ if(c>=0xD800&&c<=0xDFFF) continue;
    utf8proc_uint8_t in[8]; utf8proc_ssize_t n=utf8proc_encode_char(c,in); in[n]=0;
    utf8proc_uint8_t *a=utf8proc_NFC(in),*b=utf8proc_NFKC(in),*d=utf8proc_NFKC_Casefold(in);
    printf("%X",c); for(utf8proc_uint8_t*p[3]={a,b,d},**q=p;q<p+3;q++){putchar(9);for(utf8proc_uint8_t*r=*q;*r;r++)printf("%02x",*r);} putchar(10); free(a);free(b);free(d);} }
