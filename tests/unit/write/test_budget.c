/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writer budget on its own (forwarder/write/budget.c): what fits, what
 * waits, the bookkeeping that never waits and is reported once, the bytes on
 * their way back that spare an early flush, and the peaks per file and over
 * all files.
 */
#include "write/budget.h"

#include "unit_check.h"

#include <stdio.h>

/* An empty budget takes any message; a full one makes the next wait. */
static void test_fit_and_wait(void)
{
    fwdioi_wbudget_t b;
    fwdioi_wbudget_file_t f = {0, 0};
    fwdioi_wbudget_init(&b, 100);
    CHECK(!fwdioi_wbudget_must_wait(&b, 1000)); /* holds nothing: budget + one message */
    fwdioi_wbudget_add(&b, &f, 1000);
    CHECK(b.held == 1000 && f.held == 1000);
    CHECK(fwdioi_wbudget_must_wait(&b, 1));
    fwdioi_wbudget_sub(&b, &f, 1000);
    CHECK(b.held == 0 && f.held == 0 && f.peak == 1000);
    CHECK(fwdioi_wbudget_peak(&b) == 1000);

    fwdioi_wbudget_add(&b, &f, 60);
    CHECK(!fwdioi_wbudget_must_wait(&b, 40)); /* exactly at the limit fits */
    CHECK(fwdioi_wbudget_must_wait(&b, 41));
    CHECK(!fwdioi_wbudget_over(&b, 40) && fwdioi_wbudget_over(&b, 41));
    fwdioi_wbudget_sub(&b, &f, 60);
}

/* A unit buffer is granted only within the limit, and a refusal counts
 * nothing. */
static void test_reserve(void)
{
    fwdioi_wbudget_t b;
    fwdioi_wbudget_file_t f = {0, 0}, g = {0, 0};
    fwdioi_wbudget_init(&b, 100);
    CHECK(fwdioi_wbudget_reserve(&b, &f, 70));
    CHECK(!fwdioi_wbudget_reserve(&b, &g, 31));
    CHECK(b.held == 70 && g.held == 0 && g.peak == 0);
    CHECK(fwdioi_wbudget_reserve(&b, &g, 30));
    CHECK(b.held == 100 && f.held == 70 && g.held == 30);
    CHECK(!fwdioi_wbudget_reserve(&b, &f, 1));
    fwdioi_wbudget_sub(&b, &f, 70);
    fwdioi_wbudget_sub(&b, &g, 30);
    CHECK(b.held == 0 && fwdioi_wbudget_peak(&b) == 100 && f.peak == 70 && g.peak == 30);
}

/* Bookkeeping is counted but never makes a message wait; passing the limit
 * on its own is said once per budget. */
static void test_meta(void)
{
    fwdioi_wbudget_t b;
    fwdioi_wbudget_file_t f = {0, 0};
    fwdioi_wbudget_init(&b, 100);
    CHECK(fwdioi_wbudget_meta(&b, &f, 80) == 0);
    CHECK(b.held == 80 && b.meta == 80 && f.held == 80);
    CHECK(!fwdioi_wbudget_must_wait(&b, 50)); /* only bookkeeping held */
    CHECK(fwdioi_wbudget_meta(&b, &f, 21) == 1); /* 101 > 100: reported */
    CHECK(fwdioi_wbudget_meta(&b, &f, 50) == 0); /* once */
    CHECK(fwdioi_wbudget_meta(&b, &f, -151) == 0);
    CHECK(b.held == 0 && b.meta == 0 && f.held == 0 && f.peak == 151);
    fwdioi_wbudget_add(&b, &f, 10); /* a message beside bookkeeping: it waits again */
    CHECK(fwdioi_wbudget_meta(&b, &f, 90) == 0);
    CHECK(fwdioi_wbudget_must_wait(&b, 1));
    fwdioi_wbudget_meta(&b, &f, -90);
    fwdioi_wbudget_sub(&b, &f, 10);
}

/* Bytes whose writes are in flight come back by themselves: only what they
 * do not cover calls for an early flush. */
static void test_releasing(void)
{
    fwdioi_wbudget_t b;
    fwdioi_wbudget_file_t f = {0, 0};
    fwdioi_wbudget_init(&b, 100);
    fwdioi_wbudget_add(&b, &f, 90);
    CHECK(fwdioi_wbudget_short(&b, 20));
    fwdioi_wbudget_releasing(&b, 40); /* a unit handed to storage */
    CHECK(b.held == 90 && b.releasing == 40);
    CHECK(!fwdioi_wbudget_short(&b, 20) && fwdioi_wbudget_must_wait(&b, 20));
    CHECK(fwdioi_wbudget_short(&b, 51));
    fwdioi_wbudget_released(&b, &f, 40); /* its write is done */
    CHECK(b.held == 50 && b.releasing == 0 && f.held == 50);
    CHECK(!fwdioi_wbudget_must_wait(&b, 20));
    fwdioi_wbudget_sub(&b, &f, 50);
    CHECK(b.held == 0 && f.peak == 90 && fwdioi_wbudget_peak(&b) == 90);
}

int main(void)
{
    test_fit_and_wait();
    test_reserve();
    test_meta();
    test_releasing();
    return unit_result("test_budget");
}
