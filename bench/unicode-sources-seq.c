// Part of bench/unicode-sources.sh: utf8proc NFC of each hex UTF-8 line of stdin.
#include <stdio.h>
#include <stdlib.h>
#include <utf8proc.h>
int main(void){ char h[256]; while(scanf("%255s",h)==1){ utf8proc_uint8_t b[128]; int n=0; for(char*p=h;*p;p+=2){unsigned v; sscanf(p,"%2x",&v); b[n++]=v;} b[n]=0;
  utf8proc_uint8_t*a=utf8proc_NFC(b); for(utf8proc_uint8_t*r=a;*r;r++)printf("%02x",*r); putchar(10); free(a);} }
