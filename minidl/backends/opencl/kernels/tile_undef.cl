// Included after each kernel of conv_tiled.cl: forget tile_body.cl's hooks (tile_body.cl lists
// them) so that the next kernel defines its own.
#undef A_AT_TILE
#undef A_K_FASTEST
#undef B_AT_TILE
#undef B_K_FASTEST
#undef B_ROW
#undef K_GROUP
#undef ROW_SKIPS
